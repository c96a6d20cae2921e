import time

# Like a real pilot submission: one dialogue for the whole module, not one per instance.
ACTIVE = {"session": None}


class Team_ARIADialogAPI:
    def OpenConnection(self, auth=None):
        return True

    def CloseConnection(self):
        if ACTIVE["session"] is self:
            ACTIVE["session"] = None
        return True

    @staticmethod
    def GetVersion():
        return "shared 1.0"

    def StartSession(self):
        ACTIVE["session"] = self
        return True

    def GetResponse(self, text):
        time.sleep(0.02)
        if ACTIVE["session"] is not self:
            return {"success": False, "response": "No active scenario"}
        return {"success": True, "response": f"ok: {text}"}
