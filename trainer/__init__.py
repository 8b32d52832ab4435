"""The two-tower trainer and ReQA evaluation. Installed as `wikipairs.trainer`."""
