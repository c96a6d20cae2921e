"""The testing layer: scenario packs, model-testing scripts, simulated users, human sessions."""

__all__: list[str] = []
