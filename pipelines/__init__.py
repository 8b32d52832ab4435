"""Apache Beam transforms that only compose the wikipairs core. Installed as `wikipairs.pipelines`."""
