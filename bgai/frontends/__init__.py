"""The ways in: the ``bgai`` command, the terminal game, the web server and page, GNU Backgammon's external player
protocol and UBGI. Only translate: every rule and decision is in the layers below.
"""
