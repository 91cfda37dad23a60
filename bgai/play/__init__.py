"""Games with people and their record: the game session every front end drives, match analysis and its report, and
other people's agents on the bench. Imports the layers below it.
"""
