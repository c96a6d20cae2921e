from aria_dialog_api_base import AriaDialogAPI
from utils import PREFIX


class Team_ARIADialogAPI(AriaDialogAPI):
    def StartSession(self):
        self.count = 0
        return True

    def GetResponse(self, text):
        self.count += 1
        return {"success": True, "response": f"{PREFIX} {self.count}"}
