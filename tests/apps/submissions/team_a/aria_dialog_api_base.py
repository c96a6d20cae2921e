class AriaDialogAPI:
    shipped_by_team = True
