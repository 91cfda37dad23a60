"""Learning the network: TD(lambda) self-play, lookahead and rollout-labelled stages, the label shards. Imports the
layers below it.
"""
