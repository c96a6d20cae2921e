from aria_dialog_api_base import AriaDialogAPI
from utils import PREFIX


class Team_ARIADialogAPI(AriaDialogAPI):
    def OpenConnection(self, auth=None):
        self.key = (auth or {}).get("key")
        return True

    def CloseConnection(self):
        return True

    @staticmethod
    def GetVersion():
        return "team-a 1.0"

    def StartSession(self):
        self.history = []
        return True

    def GetResponse(self, text):
        self.history.append(text)
        return {"success": True, "response": f"{PREFIX} #{len(self.history)} ({self.key}): {text}"}
