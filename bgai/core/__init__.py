"""The rules on boards seen from the player on roll: dice, move generation, the phase of a position and what a finished
game scores, the cube's and the match's rules and arithmetic, plays in standard notation, the batched turn loop
every game runs on, and the plumbing (errors, atomic files, progress, worker pools, the compiled kernels). Imports
nothing else of bgai's.
"""
