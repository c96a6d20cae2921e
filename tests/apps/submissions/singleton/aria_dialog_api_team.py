import time

# One instance for every session, keeping the dialogue on it: histories mix.
_ONLY = None


class Team_ARIADialogAPI:
    def __new__(cls):
        global _ONLY
        if _ONLY is None:
            _ONLY = super().__new__(cls)
            _ONLY.history = []
        return _ONLY

    def OpenConnection(self, auth=None):
        return True

    def CloseConnection(self):
        return True

    @staticmethod
    def GetVersion():
        return "singleton 1.0"

    def StartSession(self):
        return True

    def GetResponse(self, text):
        time.sleep(0.02)
        self.history.append(text)
        return {"success": True, "response": f"ok after {len(self.history)} messages"}
