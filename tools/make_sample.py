#!/usr/bin/env python3
"""Generate the bundled sample MediaWiki dump ``wikipairs/data/sample.xml.bz2``.

The sample is a tiny, self-written encyclopedia about the (fictional) Vell
Valley, written in MediaWiki export format 0.10 exactly as a real
pages-articles dump would be.  It is meant to exercise the extractor: links
of every shape, redirects (including a chain, a cycle and a section
redirect), disambiguation and list pages, non-article namespaces and the usual
wikitext furniture (infoboxes, references, tables, galleries, templates).

Standard library only.  The output is deterministic: running this script
again regenerates the identical file byte for byte.

    python3 tools/make_sample.py
"""

from __future__ import annotations

import bz2
import hashlib
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "wikipairs" / "data" / "sample.xml.bz2"

FIRST_PAGE_ID = 41001
FIRST_REV_ID = 960001001

NAMESPACES = [
    (-2, "Media"),
    (-1, "Special"),
    (0, ""),
    (1, "Talk"),
    (2, "User"),
    (3, "User talk"),
    (4, "Wikipedia"),
    (5, "Wikipedia talk"),
    (6, "File"),
    (7, "File talk"),
    (8, "MediaWiki"),
    (9, "MediaWiki talk"),
    (10, "Template"),
    (11, "Template talk"),
    (12, "Help"),
    (13, "Help talk"),
    (14, "Category"),
    (15, "Category talk"),
    (100, "Portal"),
    (101, "Portal talk"),
    (118, "Draft"),
    (119, "Draft talk"),
    (710, "TimedText"),
    (711, "TimedText talk"),
    (828, "Module"),
    (829, "Module talk"),
]
NS_IDS = {name: key for key, name in NAMESPACES if name}

# (username, user id); a user id of None means an anonymous (IP) edit.
CONTRIBUTORS = [
    ("Riverwatcher", 1204417),
    ("Hollis Reader", 3318820),
    ("Ardmere1904", 2750091),
    ("203.0.113.45", None),
    ("KesshamHistorian", 4409126),
    ("Tidal Punt", 5012733),
]

COMMENTS = [
    "expand history section",
    "copyedit; fix links",
    "add references",
    "/* See also */ add link",
    "infobox update",
    "tidy categories",
    "rv unexplained removal",
]

# ---------------------------------------------------------------------------
# Pages.  Each entry is (title, wikitext).  A redirect is recognised from its
# text; the namespace is derived from the title prefix.
# ---------------------------------------------------------------------------

PAGES: list[tuple[str, str]] = []


def page(title: str, text: str) -> None:
    # MediaWiki strips trailing whitespace when a revision is saved.
    PAGES.append((title, text.strip()))


# --- Articles -------------------------------------------------------------

page("River Vell", """
{{Short description|River in the Vell Valley}}
{{Infobox river
| name        = River Vell
| source1     = [[Ossary Hills]]
| mouth       = [[Sea of Carrow]] at [[Holtby Cross]]
| length      = {{convert|112|km|mi}}
| tributaries = [[Greywater]], [[Alder Beck]]
}}
The '''River Vell''' ({{IPA|/vɛl/}}) is a river of approx. 112 kilometres that drains the [[Vell Valley]]. It rises in the [[Ossary Hills]], passes through [[Lake Ossary]] and reaches the sea at [[Holtby Cross]]. On the way it flows past the towns of [[Marrowfield]], [[Kessingham]], [[Brannock]] and [[Ardmere]].<ref name="survey">{{cite web|url=https://example.org/vell-survey|title=Survey of the River Vell|publisher=Vell Valley Rivers Board|year=2019}}</ref>

== Course ==
The upper river is narrow and fast, falling approx. 300&nbsp;m in its first twenty kilometres. Below the [[Ossary Dam]] the gradient eases and the valley widens into water meadows. Near [[Harrowgate Ford]] a run of rapids once blocked barges, which is why the [[Vell Navigation]] was cut in the 1790s.

The last few kilometres are tidal. The shallow channels there were worked for centuries by flat-bottomed [[Vell punt]]s, and small ferries crossed where no [[bridge]]s stood.<ref name="survey" />

=== Tributaries ===
The largest tributary is the [[Greywater]], which joins at [[Brannock]]. Smaller streams include the [[Alder Beck]] and the [[Sallow Brook]].<!-- check spelling against the 1:25,000 map -->

== History ==
{{main|Great Flood of 1888}}
Monks of [[Kessingham Abbey]] built the first weirs on the river c. 1150. In the 19th century the current drove mills such as [[Greywater Mill]]. The [[Flood of 1888|great flood of 1888]] swept away two crossings and led to new embankments along the lower river.

== Ecology ==
The Vell supports brown trout, eel and otter. Water quality improved sharply after 1990, when the last tannery at Kessingham closed.{{citation needed|date=May 2020}} Anglers fish the reach between Marrowfield and the dam. Trout from this stretch is the traditional filling of [[Brannock pie]].

== See also ==
* [[List of bridges over the Vell]]
* [[Vell (disambiguation)]]

== References ==
{{Reflist}}

== External links ==
* [https://example.org Example site]

[[Category:Rivers of the Vell Valley]]
[[Category:Vell Valley]]

[[de:Vell (Fluss)]]
[[fr:Vell (rivière)]]
""")

page("Vell", """
'''Vell''' may refer to:

* [[River Vell]], a river that gives its name to the region
* [[Vell Valley]], the region drained by the river
* [[Vell Railway]], a former railway along the valley
* [[Vell dialect]], the traditional speech of the valley
* [[Vell (surname)]], people with the surname

== See also ==
* [[Vell (disambiguation)]]

{{dab}}
""")

page("Vell (disambiguation)", """
'''Vell''' or '''Vel''' may also refer to:

== Places and things ==
* [[Vell]], the main list of meanings for the river and region
* [[Vell Navigation]], a canal on the [[river Vell]]
* [[Vell punt]], a type of river boat
* [[Vell Valley University]], a university in [[Kessingham]]
* [[Vell Valley Lantern Festival]], a yearly event in [[Ardmere]]

== People ==
* [[Jonas Vell]] (1790–1851), a canal surveyor
* Inspector Vell, the detective in the novels of [[Margit Hollis]]

{{disambiguation}}
""")

page("List of bridges over the Vell", """
{{Short description|None}}
This is a '''list of bridges over the [[River Vell]]''', ordered from the mouth upstream. It covers road, rail and foot crossings in use {{as of|2020}}. Fords and ferries are described in the article on [[Harrowgate Ford]] and are not listed here.

== Current crossings ==
{| class="wikitable sortable"
|+ Crossings of the Vell
! Name !! Type !! Opened !! Location !! Notes
|-
| [[Holtby Cross Swing Bridge]] || Swing bridge || 1897 || [[Holtby Cross]] || Opens for shipping
|-
| [[Old Bridge]] || Stone arch || 1612 || [[Ardmere]] || Restored by {{sortname|Anna|Keller}} in 1934
|-
| [[Kessingham Bridge]] || Iron girder || 1889 || [[Kessingham]] || Replaced a crossing lost in 1888
|-
| [[Marrowfield Viaduct]] || Railway viaduct || 1903 || [[Marrowfield]] || Fourteen arches; carried the [[Vell Railway]]
|-
| [[Ossary Dam]] road || Dam crest || 1952 || [[Lake Ossary]] || Closed to heavy vehicles
|}

== Former crossings ==
Two timber bridges at Kessingham and Brannock were destroyed in the [[Great Flood of 1888]]. Only the Kessingham crossing was rebuilt. A ferry served Brannock until 1931, when a footbridge designed by [[Anna Keller (engineer)|Anna Keller]] was opened. That footbridge was demolished in 1979 after its piers were found to be unsafe.<ref>{{cite web|url=https://example.org/brannock-footbridge|title=The Brannock footbridge, 1931–1979|publisher=Vell Valley Museum}}</ref>

== See also ==
* [[Vell Navigation]]
* [[:Category:Bridges over the River Vell]]

== References ==
{{Reflist}}

[[Category:Bridges over the River Vell| ]]
[[Category:Lists of bridges]]
""")

page("Vell Valley", """
{{Short description|Region around the River Vell}}
__NOTOC__
The '''Vell Valley''' is the region drained by the [[River Vell]] and its tributaries. It stretches from the [[Ossary Hills]] to the sea at [[Holtby Cross]] and has approx. 140,000 inhabitants. The valley is known for its bridges, its river festival and a dish called [[Brannock pie]].

== Geography ==
The valley is about 15&nbsp;km wide at its broadest. Its upper part is wooded, with [[Ossary Forest]] covering the slopes north of [[Lake Ossary]]. The lower part is flat farmland protected by embankments built after the [[Great Flood of 1888]].

== Settlements ==
* [[Marrowfield]], the highest town on the river
* [[Kessingham]], the largest town and seat of the [[Vell Valley University|university]]
* [[Brannock]], a village at the mouth of the Greywater
* [[Ardmere]], the market town at the head of the estuary
* [[Holtby Cross]], the port at the mouth

See also [[:Category:Towns]] for a wider list.

== Economy ==
Farming, tourism and education are the main employers. The [[Vell Railway]] once carried coal and timber down the valley, but it closed to freight in 1968. Since then visitors have come for walking, angling and the [[Vell Valley Lantern Festival]] each October. Many of them begin at the [[Vell Valley Museum]] in Kessingham.

== See also ==
* [[Vell dialect]]
* [[Vell (disambiguation)]]

[[Category:Vell Valley| ]]
[[Category:Regions]]
""")

page("Ardmere", """
{{Short description|Market town in the Vell Valley}}
{{Infobox settlement
| name            = Ardmere
| settlement_type = Market town
| motto           = ''Per pontem''<br />(By the bridge)
| population      = 18,420
| population_as_of = 2020
| river           = [[River Vell]]
}}
'''Ardmere''' is a market town on the [[Vell River|River Vell]], at the point where the river widens into its estuary. It had a population of 18,420 {{as of|2020}}. The town grew up around the [[Old Bridge]], for centuries the lowest crossing of the river.

== History ==
A settlement existed here by c. 900, when a ferry linked the two banks. The stone bridge was finished in 1612 and the market charter followed soon after. In the 18th century Ardmere became a busy river port, and barges from the [[Vell Navigation]] unloaded at its quays.

The [[Great Flood of 1888]] damaged the lower town and left the bridge standing alone in the water for three days. The flood is still remembered each year in the [[Vell Valley Lantern Festival]].

=== Railway ===
The [[Vell Railway]] reached the town in 1904, and [[Ardmere railway station]] became its southern terminus. Passenger services ended in 1968, but the station building survives as a café.

== Education ==
Ardmere has two secondary schools. Most students who go on to higher education attend the [[VVU|university]] at Kessingham, approx. 25&nbsp;km upstream.<ref name="census">{{cite web|url=https://example.org/vell-census-2020|title=Vell Valley census 2020|publisher=Vell Valley Council}}</ref>

== Notable people ==
The engineer [[Anna Keller]] was born in the town, and the poet [[Margit Hollis]] lived at St. Aldric's Lane for most of her life. A blue plaque marks her house.<ref name="census" />

== References ==
{{Reflist}}

[[Category:Towns in the Vell Valley]]
[[Category:Market towns]]
""")

page("Kessingham", """
{{Short description|Largest town in the Vell Valley}}
{{Infobox settlement
| name            = Kessingham
| settlement_type = Town
| population      = 41,350
| population_as_of = 2020
| river           = [[River Vell]]
| university      = [[Vell Valley University]]
}}
'''Kessingham''' is the largest town in the [[Vell Valley]], with approx. 41,000 inhabitants. It stands on the north bank of the [[River Vell]] between [[Marrowfield]] and [[Brannock]]. The town is home to [[Vell University]] and the ruins of [[Kessingham Abbey]].

== History ==
Kessingham grew around its abbey, founded in the 12th century. After the abbey was dissolved, the town became a centre of the wool and leather trades. Tanneries lined the river until the late 20th century.

The timber bridge was lost in the [[Great Flood of 1888]]. A new iron bridge opened a year later and was paid for by the [[Vell Bridge Trust]], a body that also maintained other crossings in the valley.<ref>{{cite web|url=https://example.org/kessingham-bridge|title=Kessingham Bridge, 1889|publisher=Vell Valley Museum}}</ref>

== Culture ==
The [[Vell Valley Museum]] occupies the old market hall in the town square. Each spring the university and the town council hold a book fair in honour of [[Margit Hollis]]. The local football club, Kessingham Rovers, plays at [[Abbey Meadow]].

=== Dialect ===
Older residents still use words from the [[Vell dialect]], such as ''brig'' for a bridge. The university runs an evening class in the dialect each winter.

== Transport ==
Kessingham had a station on the [[Vell Railway]] until 1968. Buses now link the town with [[Ardmere]] and Marrowfield every half hour.

== References ==
{{Reflist}}

[[Category:Towns in the Vell Valley]]
[[Category:University towns]]
""")

page("Brannock", """
{{Short description|Village in the Vell Valley}}
{{Infobox settlement
| name            = Brannock
| settlement_type = Village
| population      = 2,310
| river           = [[River Vell]], [[Greywater]]
}}
'''Brannock''' is a village where the Greywater stream joins the [[River Vell]]. It lies between [[Kessingham]] and [[Ardmere]] and had 2,310 residents at the 2020 census. The village gives its name to [[Brannock pie]], a trout and leek pie.

== History ==
Brannock was a farming village held by [[Kessingham Abbey]] until the 16th century. Its watermill, [[Greywater Mill]], ground corn from c. 1600 until 1921. The village was badly hit by [[Flood of 1888|the 1888 flood]], which destroyed the timber bridge and many cottages.

After the flood a ferry carried people across the Vell until 1931. A footbridge by [[Anna Keller]] then replaced it for almost fifty years.

== Geography ==
The village sits on a low gravel terrace. Upstream, the old crossing at [[Harrowgate Ford]] can still be waded in dry summers. Many families keep boats for fishing trips to [[Ossary]] and the upper river.

== Cuisine ==
{{main|Brannock pie}}
The pie was first recorded in a parish cookbook of 1792. It is still served at the village inn, the Punt and Lantern.<!-- inn name per 2019 guidebook -->

== See also ==
* [[List of bridges over the Vell]]

[[Category:Villages in the Vell Valley]]
""")

page("Holtby Cross", """
{{Short description|Port town at the mouth of the River Vell}}
{{Infobox settlement
| name            = Holtby Cross
| settlement_type = Port town
| population      = 9,870
| river           = [[River Vell]]
}}
'''Holtby Cross''' is a small port at the mouth of the [[River Vell]], facing the [[Sea of Carrow]]. It grew up around a medieval market cross that still stands by the harbour. Today the town has approx. 9,900 residents and a modest fishing fleet.

== Harbour ==
The harbour was deepened in 1895 so that coastal steamers could reach the quays. Two years later the [[Holtby Cross Swing Bridge]] was built across the river mouth; it still opens for vessels a few times each week. Timber and coal were shipped from here after arriving on the [[Vell Railway]].

== Culture ==
The town keeps a fleet of racing [[Vell punt]]s, and the annual regatta ends at the harbour wall. Speakers of the [[Vell dialect]] here have a distinctive coastal accent. The coastal path links the town with [[Ardmere]], about 9&nbsp;km upstream.

== See also ==
* [[List of bridges over the Vell]]
* [[Vell Valley]]

[[Category:Towns in the Vell Valley]]
[[Category:Ports and harbours]]
""")

page("Marrowfield", """
{{Short description|Town in the upper Vell Valley}}
{{Infobox settlement
| name            = Marrowfield
| settlement_type = Town
| population      = 12,040
| river           = [[River Vell]]
}}
'''Marrowfield''' is the highest town on the [[River Vell]], just below the [[Ossary Dam]]. It is known for the [[Marrowfield Viaduct]], which carried the [[Vell Railway]] across the valley. The town has approx. 12,000 residents.

== History ==
Marrowfield was a quiet sheep town until the railway arrived in 1903. The building of the viaduct brought hundreds of workers, and many settled in the new streets east of the station. Construction of the dam in the 1940s caused a second, smaller boom.

Since the 1990s the town has held its own small [[Lantern festival]], a week before the larger event at [[Ardmere]]. It draws a few hundred visitors to the riverside park.

== Economy ==
Sheep farming and forestry remain important, and a sawmill on the edge of town processes timber from [[Ossary Forest]]. Tourism grew after the viaduct reopened as a footpath in 1981. Walkers now use the town as a base for the lake and the hills.

== Notable people ==
* [[Tobias Renfrew]], railway promoter, lived at Viaduct House
* [[Edwin Marsh]], physician, practised here from 1895 to 1920
* [[Harriet Dunmore]], botanist

== See also ==
* [[Ossary Forest]]

[[Category:Towns in the Vell Valley]]
""")

page("Lake Ossary", """
{{Short description|Reservoir on the River Vell}}
'''Lake Ossary''' is a reservoir on the upper [[River Vell]], formed by the [[Ossary Dam]] in 1952. It flooded a natural lake of the same name and the hamlet of [[Lower Ossary]]. The lake is approx. 7&nbsp;km long and supplies drinking water to most of the [[Vell Valley]].

[[Image:Lake Ossary from the north.jpg|thumb|left|Lake Ossary seen from [[Ossary Forest]]]]

== Natural lake ==
Before the dam was built, the lake was a shallow glacial basin fringed by reed beds. Travellers in the 18th century described it as the most beautiful water in the region. The poet [[Margit Hollis]] wrote several of her early poems on its shore.

== Reservoir ==
Filling the reservoir took almost two years. During droughts the ruined church of Lower Ossary reappears, which draws many visitors.<ref name="water">{{cite web|url=https://example.org/ossary-reservoir|title=Lake Ossary reservoir|publisher=Vell Water Company}}</ref> Swimming is forbidden, but sailing and fishing are allowed under licence.

=== Wildlife ===
The reed beds at the northern end are a reserve for wading birds. Ospreys have nested in the adjoining [[Ossary Forest]] since 2009.<ref name="water" />

== See also ==
* [[Ossary Dam]]
* [[River Vell]]

== References ==
{{Reflist}}

[[Category:Lakes of the Vell Valley]]
[[Category:Reservoirs]]
""")

page("Ossary Dam", """
{{Short description|Dam on the River Vell}}
The '''Ossary Dam''' is a concrete gravity dam on the upper [[River Vell]], above [[Marrowfield]]. It was designed by [[Anna Keller]] and completed in 1952. The dam holds back [[Lake Ossary]] and protects the lower valley from floods like that of 1888.

== Design ==
The dam is 42&nbsp;m high and 380&nbsp;m long. Keller's team noted that the storage volume grows roughly as <math>x^2</math> with the depth of water x, which guided the choice of crest height. A road runs along the crest, though it has been closed to heavy vehicles since 2004.

== Construction ==
Work began in 1946 and employed approx. 900 people at its peak. Materials came up the [[Vell Railway]] and over the [[Marrowfield Viaduct]]. Eleven workers died during construction, and a memorial stands at the eastern abutment.<ref>{{cite web|url=https://example.org/ossary-dam-history|title=Building the Ossary Dam|publisher=Vell Valley Museum}}</ref>

== Operation ==
The dam is run by the [[Vell Water Company]]. A small hydroelectric station at its foot was added in 1963. Its two turbines supply approx. 4&nbsp;MW, enough for the town of Marrowfield.

== References ==
{{Reflist}}

[[Category:Dams in the Vell Valley]]
[[Category:Buildings and structures completed in 1952]]
""")

page("Old Bridge", """
{{Short description|Stone bridge in Ardmere}}
'''Old Bridge''' is a seven-arch stone bridge across the [[River Vell]] at [[Ardmere]]. Completed in 1612, it is the oldest surviving crossing on the river. It was restored in 1934 by the engineer [[Anna Keller (engineer)|Anna Keller]].

[[File:Vell bridge.jpg|thumb|The bridge in 1910, seen from the [[River Vell|river]]]]

== History ==
The bridge replaced a ferry that had been run by the monks of [[Kessingham Abbey]]. Tolls were collected until 1841, when the [[Vell Bridge Company]] bought out the last toll holder. Two arches were widened in the 1790s so that barges from the [[Vell Navigation]] could pass beneath.

During the [[Great Flood of 1888]] water rose above the parapets. The bridge survived, although its downstream cutwaters had to be rebuilt.<ref name="keller">{{cite web|url=https://example.org/keller-report|title=Report on the Old Bridge, Ardmere|author=Keller, A.|year=1933}}</ref>

== Restoration ==
By 1930 the bridge was too narrow for motor traffic. Keller rejected plans to demolish it and instead built a separate roadway on light steel brackets. Her report praised the original masons, and the work was completed in 1934.<ref name="keller" />

== In culture ==
The bridge is the centre of the [[Vell Valley Lantern Festival]], when lanterns are floated from its arches. In the [[Vell dialect]] it is simply called ''the Brig''.

== See also ==
* [[List of bridges over the Vell]]

== References ==
{{Reflist}}

[[Category:Bridges over the River Vell]]
[[Category:Bridges completed in 1612]]
""")

page("Marrowfield Viaduct", """
{{Short description|Railway viaduct in Marrowfield}}
The '''Marrowfield Viaduct''' is a fourteen-arch brick viaduct that carried the [[Vell Railway]] across the [[River Vell]] at [[Marrowfield]]. It was built between 1901 and 1903. The line closed in 1968, and the viaduct now carries a footpath and cycle route.

== Construction ==
The viaduct was promoted by [[Tobias Renfrew]] and built by a workforce of approx. 600 men. Its piers rest on timber piles driven into the river gravels. Some 8 million bricks were fired in kilns beside the site.<ref>{{cite web|url=https://example.org/marrowfield-viaduct|title=Marrowfield Viaduct|publisher=Vell Railway Society}}</ref>

== Later history ==
Materials for the [[Ossary Dam]] crossed the viaduct in the late 1940s. After closure the structure was nearly demolished. A local campaign saved it in 1974, and it was reopened for walkers in 1981. Repairs to the parapets were funded by the [[Vell Railway Society]] and the county council. The viaduct is now one of the most photographed structures in the valley.

== See also ==
* [[List of bridges over the Vell]]

== References ==
{{Reflist}}

[[Category:Bridges over the River Vell]]
[[Category:Railway viaducts]]
""")

page("Harrowgate Ford", """
{{Short description|Ancient river crossing}}
'''Harrowgate Ford''' is an ancient crossing of the [[River Vell]] between [[Brannock]] and [[Kessingham]]. The name comes from the dialect word ''gate'', meaning a road, and the ford was used by drovers until the 19th century. It can still be waded in dry summers.

== Description ==
A ''[[wikt:ford|ford]]'' is a shallow place where a river can be crossed on foot or by cart. At Harrowgate a bar of hard gravel crosses the river diagonally. Below it lie the rapids that made the river impassable for barges, which is why the [[Vell Navigation]] was cut around them.

== History ==
Roman coins found in the gravel suggest the crossing is very old. In the Middle Ages the monks of [[Kessingham Abbey]] kept a hostel on the north bank for travellers. The ford declined once the [[Old_Bridge]] at Ardmere and the new Kessingham Bridge offered dry crossings.

== See also ==
* [[List of bridges over the Vell]]
* [[Vell dialect]]

[[Category:Fords]]
[[Category:River Vell]]
""")

page("Vell Railway", """
{{Short description|Former railway in the Vell Valley}}
The '''Vell Railway''' ({{abbr|VR|Vell Railway}}) was a standard-gauge railway running approx. 60&nbsp;km along the [[Vell Valley]]. It linked [[Marrowfield]] with [[Ardmere]] and the port of [[Holtby Cross]]. The line opened on {{nowrap|12 May 1904}} and closed completely in 1968.

== History ==
The railway was promoted by [[Tobias Renfrew]], who formed the company in 1898. Its greatest engineering work was the [[Marrowfield Viaduct]], completed in 1903. In its best years the line carried coal, timber and slate down the valley, and tourists up to [[Lake Ossary]].

After the Second World War traffic fell steadily. Passenger trains were withdrawn in 1961 and freight followed seven years later.<ref name="vrs">{{cite web|url=https://example.org/vell-railway|title=A history of the Vell Railway|publisher=Vell Railway Society}}</ref>

== Stations ==
The principal stations were:
* Marrowfield
* Kessingham
* Brannock Halt
* [[Ardmere railway station|Ardmere]]
* Holtby Cross Quay

== Legacy ==
{{see also|Vell Valley Museum}}
Much of the trackbed is now a cycle route. The [[Vell Railway Society]] has preserved a locomotive and two carriages, which are displayed in Kessingham.<ref name="vrs" />

== Further reading ==
* Renfrew, T. ''The Vell Railway: Its Origins and Purpose''. Kessingham, 1905.

== References ==
{{Reflist}}

[[Category:Closed railways]]
[[Category:Transport in the Vell Valley]]
""")

page("Ardmere railway station", """
{{Short description|Former railway station}}
'''Ardmere railway station''' was the southern passenger terminus of the [[Vell Railway]], serving the town of [[Ardmere]]. It opened in 1904 and closed to passengers in 1961. The building now houses a café and a small display about the line.

== Building ==
The station was designed in a plain red-brick style with a timber canopy. It stood on the river front, a short walk from the [[Old Bridge]]. A goods yard to the south handled coal for the town's gasworks.

== Closure ==
Passenger numbers fell after a bus service began along the valley road in the 1950s. The last passenger train left on 30 September 1961, and freight ended in 1968. The building stood empty for twenty years before it was restored by a local trust.

== Services ==
At its peak the station saw eleven departures a day to Kessingham and Marrowfield. Goods trains continued to the quay at [[Holtby Cross]]. For the full list see [[Vell Railway stations|other stations on the line]].

== References ==
* Renfrew, T. ''The Vell Railway''. 1905.

[[Category:Disused railway stations]]
[[Category:Buildings in Ardmere]]
""")

page("Vell Valley University", """
{{Short description|Public university in Kessingham}}
'''Vell Valley University''' (VVU) is a public university in [[Kessingham]]. It was founded in 1921 by Dr. [[Edwin Marsh]] as a college of medicine and agriculture. It has approx. 9,500 students {{as of|2020}}.

== History ==
Marsh argued that the valley needed its own doctors and farm scientists. The college opened in a former wool warehouse with 46 students. It gained university status in 1962 and moved to a new campus beside [[Kessingham Abbey]] in 1970.

=== Later growth ===
Departments of engineering and river science were added in the 1970s, partly in honour of [[Anna Keller]]. The university now runs a field station on [[Lake Ossary]].<ref>{{cite web|url=https://example.org/vvu-history|title=Our history|publisher=Vell Valley University}}</ref>

== Campus ==
The main campus lies on the north bank of the river, facing the abbey ruins. Its library occupies a converted tannery, and a footbridge links it with the sports fields. Students often describe the setting as the most attractive of any small university in the region.

== Academics ==
The university has four faculties: medicine, agriculture, engineering and humanities. Its Hollis Centre holds the papers of the poet [[Margit Hollis]]. Research on the [[River Vell]] has made it well known among U.S. and European hydrologists. Its river science group monitors water levels along the whole valley.

== References ==
{{Reflist}}

== External links ==
* [https://example.org/vvu Official website]

[[Category:Universities]]
[[Category:Kessingham]]
""")

page("Vell Valley Lantern Festival", """
{{Short description|Annual festival in Ardmere}}
The '''Vell Valley Lantern Festival''' is an annual festival held in [[Ardmere]] on the second Saturday of October. Thousands of paper lanterns are floated down the [[River Vell]] from the arches of the [[Old Bridge]]. The festival remembers the victims of the [[Great Flood of 1888]].

== Origins ==
The first lanterns were set on the water in 1889, one year after the flood. Families of the drowned placed candles in hollowed turnips and let them drift towards the sea. The custom was revived in 1951 as a town event, with support from the poet [[Margit Hollis]].

== The festival today ==
The day begins with a procession from [[Ardmere railway station]] to the bridge. After dark the lanterns are released, and a brass band plays on the quay. A smaller event is held at [[Marrowfield]] a week earlier.

<gallery>
File:Vell lanterns 2018.jpg|Lanterns on the river in 2018
File:Ardmere procession.jpg|The procession crossing the [[Old Bridge]]
</gallery>

== Food ==
Stalls along the quay sell [[Brannock pie]] and hot cider. Racing [[Vell punt]]s take part in a short regatta in the afternoon.

[[Category:Festivals in the Vell Valley]]
[[Category:October events]]
""")

page("Brannock pie", """
{{Short description|Trout and leek pie}}
'''Brannock pie''' is a savoury pie of river trout, leeks and potatoes under a suet crust. It is named after the village of [[Brannock]] on the [[River Vell]]. The dish is a staple of the [[Vell Valley Lantern Festival]].

== History ==
The earliest recipe appears in a Brannock parish cookbook of 1792. Fishermen's wives baked the pies in the ovens of [[Greywater Mill]] after the day's bread was done. By the 20th century the pie was sold in bakeries throughout the [[Vell Valley]].

== Preparation ==
Fresh trout is poached in milk, flaked and layered with sliced leeks and potatoes. Some cooks add a spoonful of mustard or a little cider. The pie is baked for approx. one hour and eaten hot or cold.

== Variations ==
In [[Holtby Cross]] the trout is often replaced by smoked eel or sea fish. Versions made with pike from [[Ossary]] were common before the reservoir was stocked with trout. A vegetarian pie with mushrooms and leeks is now sold at the festival as well.

== See also ==
* [[Ossary]]

[[Category:Cuisine of the Vell Valley]]
[[Category:Fish dishes]]
""")

page("Anna Keller", """
{{Short description|Civil engineer (1901–1987)}}
{{Infobox person
| name        = Anna Keller
| birth_date  = {{birth date|1901|5|12}}
| birth_place = [[Ardmere]]
| death_date  = 1987
| occupation  = Civil engineer
}}
'''Anna Keller''' (born {{birth date|1901|5|12}}; died 1987) was a civil engineer from [[Ardmere]]. She restored the [[Old Bridge]] and designed the [[Ossary Dam]]. She was one of the first women to lead a major engineering project in the region.

== Early life ==
Keller was the daughter of a lock keeper on the [[Vell Navigation]]. She studied engineering abroad, since no college in the valley then taught the subject. She returned in 1928 and joined the county surveyor's office.

== Career ==
Keller's first major work was a footbridge at [[Brannock]] in 1931. Her restoration of the Old Bridge in 1934 won praise for keeping the medieval arches intact.<ref name="kellerbio">{{cite web|url=https://example.org/anna-keller|title=Anna Keller, engineer|publisher=Vell Valley Museum}}</ref>

From 1946 she directed the building of the Ossary Dam. She later advised [[Vell Valley University]] on its new engineering department.<ref name="kellerbio" />

== Legacy ==
A bridge prize awarded by the university bears her name. Her drawings are kept at the [[Vell Valley Museum]].

== References ==
{{Reflist}}

{{DEFAULTSORT:Keller, Anna}}
[[Category:1901 births]]
[[Category:1987 deaths]]
[[Category:Civil engineers]]
""")

page("Edwin Marsh", """
{{Short description|Physician and founder of Vell Valley University}}
'''Edwin Marsh''' (1868–1940) was a physician and the founder of [[University of the Vell Valley|Vell Valley University]]. Born in [[Kessingham]], he worked as a country doctor for twenty-five years. Dr. Marsh believed that a rural region needed its own place of learning.

== Medical career ==
Marsh trained in the capital and returned to the valley in 1893. From 1895 he practised in [[Marrowfield]], where he treated workers injured building the [[Marrowfield Viaduct]]. He campaigned for clean water after a typhoid outbreak in 1907.

== Founding the university ==
In 1919 Marsh began raising money for a college. He persuaded local farmers, the railway company and the heirs of [[Tobias Renfrew]] to contribute. The college opened in 1921, and Marsh was its first principal until his death. He taught anatomy himself in the early years, often without pay.<ref>{{cite web|url=https://example.org/edwin-marsh|title=Dr. Edwin Marsh|publisher=Vell Valley University}}</ref>

== Legacy ==
The university's medical school is named the Marsh School in his honour. A portrait of him hangs in the [[Vell Valley Museum]]. His casebooks are an important source on rural health in the early 20th century.

== References ==
{{Reflist}}

{{DEFAULTSORT:Marsh, Edwin}}
[[Category:1868 births]]
[[Category:1940 deaths]]
[[Category:Physicians]]
""")

page("Margit Hollis", """
{{Short description|Poet (1879–1958)}}
'''Margit Hollis''' (1879–1958) was a poet and novelist from the [[Vell Valley]]. Her best-known collection, ''Lanterns on the Vell'' (1921), describes the [[River Vell]] through the seasons. She also wrote eleven detective novels set in [[Ardmere]].

== Life ==
Hollis was born at [[Holtby Cross]], the daughter of a harbour pilot. She moved to Ardmere as a young woman and lived on St. Aldric's Lane until her death. She never married.

== Work ==
Her poems draw on the [[Vell dialect]] and on local history, especially the [[Great Flood of 1888]]. Critics have compared her to regional poets in the U.S. and Scotland.<ref>One critic called her "the Vell's own voice" in a 1930 review.</ref>

=== Detective novels ===
The novels follow Inspector Vell, a river police officer. Several were adapted for radio in the 1950s.

== Legacy ==
Her papers are held by [[Vell Valley University]], and the Kessingham book fair is held in her honour. She helped revive the [[Vell Valley Lantern Festival]] in 1951.

== Notes ==
<references />

{{DEFAULTSORT:Hollis, Margit}}
[[Category:1879 births]]
[[Category:1958 deaths]]
[[Category:Poets]]
""")

page("Tobias Renfrew", """
{{Short description|Railway promoter (1852–1921)}}
'''Tobias Renfrew''' (1852–1921) was a businessman who promoted the [[Vell Railway]]. He made his fortune in the timber trade at [[Holtby Cross]], shipping oak and larch from [[Ossary Forest]]. He spent his later years at Viaduct House in [[Marrowfield]].

== Career ==
Renfrew formed the railway company in 1898, after years of lobbying for a line up the valley. He chose the route across the river at Marrowfield and insisted on a brick viaduct rather than a cheaper timber trestle. For details, see [[Vell Railway#History|the railway's history]].

The project nearly failed in 1900, when costs at the viaduct rose far above the estimates. Renfrew mortgaged his own house to pay the contractors. The line finally opened in 1904, and he travelled on the first train from Marrowfield to [[Ardmere]].

== Later life ==
Renfrew wrote a short account of the line in 1905. He left money in his will that later helped found [[Vell Valley University]]. A street in Marrowfield is named after him.<ref>{{cite web|url=https://example.org/renfrew|title=Tobias Renfrew|publisher=Vell Railway Society}}</ref>

== References ==
{{Reflist}}

{{DEFAULTSORT:Renfrew, Tobias}}
[[Category:1852 births]]
[[Category:1921 deaths]]
[[Category:Railway promoters]]
""")

page("Kessingham Abbey", """
{{Short description|Ruined abbey in Kessingham}}
'''Kessingham Abbey''' is a ruined monastery in the town of [[Kessingham]]. It was founded c. 1140 and dissolved in 1539. The ruins stand beside the campus of [[Vell Valley University]].

== History ==
The abbey was the largest landowner in the [[Vell Valley]] for four centuries. Its monks built weirs and mills on the [[River Vell]], ran a ferry at [[Ardmere]] and kept a hostel at [[Harrowgate Ford]]. After the dissolution the buildings were stripped for stone. Much of it was reused in houses and in the old market hall of Kessingham.

The abbey was also a centre of learning. Its library was scattered in the 16th century, but a few manuscripts survive in the [[Vell Valley Museum]].

== Ruins ==
The west front and part of the nave still stand to their full height. Excavations in the 1980s found the foundations of the chapter house and a tannery.<ref>{{cite web|url=https://example.org/kessingham-abbey|title=Kessingham Abbey excavations|publisher=Vell Valley University}}</ref> The site is open to visitors in summer.

== References ==
{{Reflist}}

[[Category:Monasteries]]
[[Category:Kessingham]]
""")

page("Vell Navigation", """
{{Short description|Canal on the River Vell}}
The '''Vell Navigation''' is a canal of {{convert|12|km|mi}} that bypasses the rapids on the [[River Vell]] near [[Harrowgate Ford]]. It was built between 1792 and 1797 and has five locks. Commercial traffic ended in 1936, but the canal is still used by pleasure boats.

== History ==
Before the canal, goods from [[Kessingham]] had to be unloaded above the rapids and carried overland. The navigation company raised money from mill owners and merchants in [[Ardmere]]. Its surveyor, [[Jonas Vell]], is sometimes said to have given the river its name, although the name is much older.

The [[Vell Railway]] took most of the canal's trade after 1904. The last commercial cargo, a load of coal for Brannock, passed through in 1936.

== Route ==
The canal leaves the river below Kessingham and rejoins it above [[Brannock]]. Lock keepers' cottages survive at three of the five locks. One of them was the childhood home of [[Anna Keller]].

== See also ==
* [[Vell punt]]
* [[Vell Railway stations]]

[[Category:Canals]]
[[Category:Transport in the Vell Valley]]
""")

page("Greywater Mill", """
{{Short description|Former watermill in Brannock}}
'''Greywater Mill''' is a former watermill at [[Brannock]], where the Greywater stream meets the [[River Vell]]. It ground corn from c. 1600 until 1921 and was badly damaged in the [[Great Flood of 1888]]. The building is now a private house, and its wheel was restored by volunteers from the [[Vell Valley Museum]] in 1996.

{{VellValley-stub}}
[[Category:Watermills]]
[[Category:Brannock]]
""")

page("Great Flood of 1888", """
{{Short description|Flood disaster in the Vell Valley}}
The '''Great Flood of 1888''' was the worst flood recorded on the [[River Vell]]. After nine days of heavy rain in March 1888, the river burst its banks from [[Marrowfield]] to the sea. At least 37 people died, most of them in [[Brannock]] and [[Ardmere]].

== The flood ==
The water rose fastest on the night of 14 March. Timber bridges at Kessingham and Brannock were swept away, and [[Greywater Mill]] lost its wheel. At Ardmere the river rose above the parapets of the [[Old Bridge]].<ref name="gazette">{{cite web|url=https://example.org/flood-1888|title=The great flood|publisher=[[Vell Gazette]]|date=1888-03-20}}</ref>

== Aftermath ==
A relief fund raised money across the country and even in the U.S., where many valley families had relatives. New embankments were built along the lower river. The disaster was later a major argument for building the [[Ossary Dam]].<ref name="gazette" />

== Remembrance ==
The [[Vell Valley Lantern Festival]] began in 1889 in memory of the victims. The poet [[Margit Hollis]] wrote about the flood in several poems.

== References ==
{{Reflist}}

[[Category:Floods]]
[[Category:1888 disasters]]
""")

page("Vell punt", """
{{Short description|Traditional river boat}}
A '''Vell punt''' is a flat-bottomed wooden boat traditionally used on the lower [[River Vell]]. It is pushed along with a long pole and can carry a cow or a small cart. The design was standardised {{circa|1850}} by boatbuilders at [[Holtby Cross]].

== Design ==
A typical punt is approx. 7&nbsp;m long and 1.2&nbsp;m wide. It is built of larch planks on oak frames. The square ends allow it to be beached on the mudflats of the estuary.

== Use ==
Punts were used for fishing, wildfowling and ferrying people across the river. Some also worked on the [[Vell Navigation]]. Today racing punts compete in a regatta during the [[Vell Valley Lantern Festival]].

== Building ==
Only two boatyards still build punts, one at Holtby Cross and one at [[Ardmere]]. A new punt takes about six weeks to complete. The [[Vell Valley Museum]] displays a restored example from 1887.

[[Category:Boat types]]
[[Category:Culture of the Vell Valley]]
""")

page("Vell dialect", """
{{Short description|Traditional speech of the Vell Valley}}
The '''Vell dialect''' is the traditional speech of the [[Vell Valley]]. It is still heard among older people in [[Brannock]], [[Kessingham]] and [[Holtby Cross]]. Its words are collected in a glossary published by the [[Vell Valley Museum]].

== Vocabulary ==
Many dialect words concern the river and its crossings. The word ''brig'' means a bridge and is used above all for the [[Old_Bridge]] at Ardmere; it is related to English ''bridge'' and German {{lang|de|Brücke}}. A ''gate'' is a road, as in [[Harrowgate Ford]], and a ''lant'' is a lantern.

== Pronunciation ==
Speakers drop the final ''-g'' in words such as ''fishing''. The river's name is pronounced with a short vowel, {{IPA|/vɛl/}}, never with a long one.

== Literature ==
The poet [[Margit Hollis]] used dialect words in many of her poems. Her detective novels also give dialect speech to several characters. A recording project at [[Vell Valley University]] has collected interviews with over a hundred speakers.

[[Category:Dialects]]
[[Category:Culture of the Vell Valley]]
""")

page("Ossary Forest", """
{{Short description|Woodland in the upper Vell Valley}}
'''Ossary Forest''' is an area of mixed woodland on the slopes north of [[Lake Ossary]]. It covers approx. 3,400 hectares and is managed for timber and recreation. Much of the forest was replanted in the 1920s after heavy felling during the First World War.

== History ==
In the Middle Ages the forest belonged to [[Kessingham Abbey]], which used it for timber and pig grazing. Later, its oaks were cut to build boats, including many [[Vell punt]]s. Timber from the forest was shipped down the [[Vell Railway]] to the port at [[Holtby Cross]].

== Wildlife ==
Red squirrels, pine martens and ospreys live in the forest. Waymarked trails lead from the car park at [[Marrowfield]] to a viewpoint above the dam.

== Management ==
The forest is owned by the county and managed by a small team of rangers. Conifer plantations are slowly being replaced by native broadleaf trees. Volunteers from the university help with bird surveys each spring.

[[Category:Forests]]
[[Category:Vell Valley]]
""")

page("Vell Valley Museum", """
{{Short description|Local history museum in Kessingham}}
The '''Vell Valley Museum''' is a local history museum in [[Kessingham]]. It opened in 1967 in the town's former market hall. Its collections cover the river, its bridges and the people of the [[Vell Valley]].

== Collections ==
The museum holds engineering drawings by [[Anna Keller]], a locomotive from the [[Vell Railway]] and a restored [[Vell punt]]. A room is devoted to the [[Great Flood of 1888]]. The archive keeps the parish records of [[Brannock]] and a dialect glossary.

== Visiting ==
Entry is free. The museum is open from Tuesday to Sunday and runs guided walks to [[Kessingham Abbey]] in summer.

== History ==
The museum grew out of a collection begun by the [[Vell Railway Society]] and local historians in the 1950s. The council bought the empty market hall for it in 1965. An extension for the flood gallery was opened in 1988, on the centenary of the disaster.

== External links ==
* [https://example.org/museum Vell Valley Museum]

[[Category:Museums]]
[[Category:Kessingham]]
""")

# --- Redirects --------------------------------------------------------------

page("Vell River", "#REDIRECT [[River Vell]]")
page("Ossary", "#REDIRECT [[Lake Ossary]]")
page("Flood of 1888", "#REDIRECT [[Great Flood of 1888]]\n\n{{R from short name}}")
# A chain of three redirects ending at an article.
page("VVU", "#REDIRECT [[Vell University]]")
page("Vell University", "#REDIRECT [[University of the Vell Valley]]")
page("University of the Vell Valley", "#REDIRECT [[Vell Valley University]]")
# A cycle of two redirects.
page("Vell Bridge Trust", "#REDIRECT [[Vell Bridge Company]]")
page("Vell Bridge Company", "#REDIRECT [[Vell Bridge Trust]]")
# A redirect to a section.
page("Vell Railway stations", "#REDIRECT [[Vell Railway#Stations]]")
# A lowercase magic word and a lowercase target.
page("Lantern festival", "#redirect [[vell Valley Lantern Festival]]")
# A target written with underscores.
page("Anna Keller (engineer)", "#REDIRECT [[Anna_Keller]]")

# --- Other namespaces -------------------------------------------------------

page("Talk:River Vell", """
{{WikiProject Vell Valley|class=B|importance=top}}

== Length of the river ==
The infobox gives 112 km, but the Rivers Board survey says 114 km including the estuary. Which should we use? [[User:Riverwatcher|Riverwatcher]] ([[User talk:Riverwatcher|talk]]) 10:02, 3 March 2020 (UTC)
:I would keep 112 km and add a note about the estuary. [[User:Tidal Punt|Tidal Punt]] ([[User talk:Tidal Punt|talk]]) 18:40, 4 March 2020 (UTC)
""")

page("Wikipedia:WikiProject Vell Valley", """
{{WikiProject status|active}}
'''WikiProject Vell Valley''' coordinates articles about the [[Vell Valley]], the [[River Vell]] and its towns.

== Goals ==
* Bring [[Ardmere]] and [[Kessingham]] to good article status.
* Add references to every article in [[:Category:Vell Valley]].

== Participants ==
* [[User:Riverwatcher]]
* [[User:KesshamHistorian]]
""")

page("Category:Towns in the Vell Valley", """
{{Commons category|Towns in the Vell Valley}}
This category contains towns in the [[Vell Valley]], along the [[River Vell]].

[[Category:Vell Valley]]
[[Category:Towns]]
""")

page("Template:Vell Valley", """
{{Navbox
| name  = Vell Valley
| title = [[Vell Valley]]
| group1 = Towns
| list1 = [[Marrowfield]] • [[Kessingham]] • [[Brannock]] • [[Ardmere]] • [[Holtby Cross]]
| group2 = Crossings
| list2 = [[Old Bridge]] • [[Marrowfield Viaduct]] • [[Harrowgate Ford]]
| group3 = Transport
| list3 = [[Vell Railway]] • [[Vell Navigation]]
}}<noinclude>
[[Category:Vell Valley templates]]
</noinclude>
""")

page("File:Vell bridge.jpg", """
== Summary ==
{{Information
| description = The [[Old Bridge]] at [[Ardmere]] seen from the [[River Vell]], 1910.
| date        = 1910
| source      = Postcard in the collection of the [[Vell Valley Museum]]
| author      = Unknown
}}

== Licensing ==
{{PD-old-70}}

[[Category:Old Bridge, Ardmere]]
""")


# ---------------------------------------------------------------------------
# XML writing
# ---------------------------------------------------------------------------


def split_namespace(title: str) -> tuple[int, str]:
    prefix, sep, _ = title.partition(":")
    if sep and prefix in NS_IDS:
        return NS_IDS[prefix], title
    return 0, title


def redirect_target(text: str) -> str | None:
    """The normalised target title, as MediaWiki writes it in <redirect>."""
    if not text.lower().startswith("#redirect"):
        return None
    target = text.split("[[", 1)[1].split("]]", 1)[0]
    target = target.split("#", 1)[0].replace("_", " ").strip()
    return target[:1].upper() + target[1:]


def sha1_base36(text: str) -> str:
    """MediaWiki's revision sha1: base-36 SHA-1, zero-padded to 31 digits."""
    number = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rem = divmod(number, 36)
        out = digits[rem] + out
    return out.rjust(31, "0")


def esc(text: str) -> str:
    return escape(text, {'"': "&quot;"})


def siteinfo() -> list[str]:
    lines = [
        "  <siteinfo>",
        "    <sitename>Wikipedia</sitename>",
        "    <dbname>enwiki</dbname>",
        "    <base>https://en.wikipedia.org/wiki/Main_Page</base>",
        "    <generator>MediaWiki 1.35.0-wmf.38</generator>",
        "    <case>first-letter</case>",
        "    <namespaces>",
    ]
    for key, name in NAMESPACES:
        if name:
            lines.append(f'      <namespace key="{key}" case="first-letter">{esc(name)}</namespace>')
        else:
            lines.append(f'      <namespace key="{key}" case="first-letter" />')
    lines += ["    </namespaces>", "  </siteinfo>"]
    return lines


def page_xml(index: int, title: str, text: str) -> list[str]:
    ns, _ = split_namespace(title)
    page_id = FIRST_PAGE_ID + index * 7
    rev_id = FIRST_REV_ID + index * 1013
    parent_id = rev_id - 389 - (index % 5) * 17
    day = 1 + index % 28
    month = 1 + index % 12
    timestamp = f"2020-{month:02d}-{day:02d}T{(9 + index) % 24:02d}:{(index * 13) % 60:02d}:{(index * 29) % 60:02d}Z"
    user, user_id = CONTRIBUTORS[index % len(CONTRIBUTORS)]
    comment = COMMENTS[index % len(COMMENTS)]
    target = redirect_target(text)
    if target is not None:
        comment = "create redirect"

    lines = [
        "  <page>",
        f"    <title>{esc(title)}</title>",
        f"    <ns>{ns}</ns>",
        f"    <id>{page_id}</id>",
    ]
    if target is not None:
        lines.append(f"    <redirect title={quoteattr(target)} />")
    lines += [
        "    <revision>",
        f"      <id>{rev_id}</id>",
        f"      <parentid>{parent_id}</parentid>",
        f"      <timestamp>{timestamp}</timestamp>",
        "      <contributor>",
    ]
    if user_id is None:
        lines.append(f"        <ip>{esc(user)}</ip>")
    else:
        lines.append(f"        <username>{esc(user)}</username>")
        lines.append(f"        <id>{user_id}</id>")
    lines.append("      </contributor>")
    if index % 4 == 3:
        lines.append("      <minor />")
    lines += [
        f"      <comment>{esc(comment)}</comment>",
        "      <model>wikitext</model>",
        "      <format>text/x-wiki</format>",
        f'      <text bytes="{len(text.encode("utf-8"))}" xml:space="preserve">{esc(text)}</text>',
        f"      <sha1>{sha1_base36(text)}</sha1>",
        "    </revision>",
        "  </page>",
    ]
    return lines


def build_xml() -> str:
    titles = [title for title, _ in PAGES]
    if len(titles) != len(set(titles)):
        raise SystemExit("duplicate page titles in sample")
    lines = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ '
        'http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="en">'
    ]
    lines += siteinfo()
    for index, (title, text) in enumerate(PAGES):
        lines += page_xml(index, title, text)
    lines.append("</mediawiki>")
    return "\n".join(lines) + "\n"


def main() -> None:
    data = build_xml().encode("utf-8")
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(bz2.compress(data, compresslevel=9))
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(PAGES)} pages, "
          f"{len(data)} bytes of XML, {OUTPUT.stat().st_size} bytes compressed")


if __name__ == "__main__":
    main()
