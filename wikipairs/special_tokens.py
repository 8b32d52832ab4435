"""The special tokens every wikipairs vocabulary starts with, and their ids: one owner for
`wikipairs vocab` (which reserves them), `build --vocab` (which frames pairs with them) and the
trainer (which pads and masks with them). No imports: the trainer and Beam workers load it alone.
"""
SPECIAL_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")
PAD, CLS, SEP, MASK, UNK = SPECIAL_TOKENS
PAD_ID, CLS_ID, SEP_ID, MASK_ID, UNK_ID = range(len(SPECIAL_TOKENS))
NUM_SPECIAL_TOKENS = len(SPECIAL_TOKENS)

__all__ = ["SPECIAL_TOKENS", "PAD", "CLS", "SEP", "MASK", "UNK", "PAD_ID", "CLS_ID", "SEP_ID",
           "MASK_ID", "UNK_ID", "NUM_SPECIAL_TOKENS"]
