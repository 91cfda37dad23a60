"""bgai's coach: the tools that measure the engine and train it, apart from the engine itself.

The engine (every ``bgai`` module outside this package) never imports the coach; the coach uses the engine
through its public API, like any other program would (``tests/test_coach.py`` checks both). Each module with a
command runs as ``python -m bgai.coach.NAME`` from the repository's root, with a seed where it draws anything, and
writes its figures as JSON.

Reference sets, judged by GNU Backgammon 1.07 at 2-ply (Debian's ``gnubg``), in ``bgai/coach/data/``:

* ``move_reference``: writes the checker-play set; ``score_moves`` scores anyone's plays on it.
* ``move_accuracy``: bgai's checker play scored on it, beside gnubg 0-ply.
* ``cube_reference``: writes the money cube-decision set; ``score_decisions`` scores anyone's doubles and takes.
* ``cube_accuracy``: bgai's cube decisions scored on it, beside gnubg 0-ply.

Strength:

* ``strength``: networks side by side at 0-ply: duplicate games against pubeval and gnubg 0-ply, and the two
  reference sets (``measure``, ``duel``, ``describe``).
* ``ply_strength``: what each ply of lookahead buys, in duplicate games against an opponent; runs compared and
  merged. Its statistics are ``bgai.core.game.GameResults.summary``'s, the one definition of them.

Training:

* ``report``: a run's training report (stage costs, learning curve, benchmarks beside a baseline), and with
  ``--ship`` the network bgai loads by default.
* ``ablation``: other model shapes trained on a stage's data with its schedule, benchmarked side by side.

Test data, hostile inputs and load:

* ``gnubg_matches``: matches GNU Backgammon plays against itself, as match files (and its analysis of them).
* ``oracles``: adapters between bgai's board and the external engines ``gnubg-nn`` and ``bgsage``, for the
  differential tests and the speed benchmarks.
* ``fuzz_matchfiles``, ``fuzz_checkpoints``, ``fuzz_api``: mutated match files, corrupted network files and hostile
  requests, each refused cleanly or read, never a crash; the test suite runs each briefly, ``make fuzz`` at length.
* ``web_load``: load test and hint latency of ``bgai serve``'s JSON API on localhost.

GNU Backgammon and the other engines are judges, opponents and sources of test positions here only: nothing they
compute becomes a training target.
"""
