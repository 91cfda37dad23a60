"""What a position is worth: the network's inputs (``encoding``) and weights, the bot (0-ply to 2-ply, cube decisions),
the bear-off database, rollouts, and the ONNX export. Imports ``bgai.core``, ``bgai.formats`` and ``bgai.players``.
"""
