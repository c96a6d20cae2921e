import time

from aria_dialog_api_base import AriaDialogAPI


class Team_ARIADialogAPI(AriaDialogAPI):
    """Misbehaves on request: the user's text names the failure."""

    def GetResponse(self, text):
        if text == "refuse":
            return {"success": False, "response": "quota exceeded"}
        if text == "raise":
            raise RuntimeError("backend down")
        if text == "hang":
            time.sleep(2)
            return {"success": True, "response": "too late"}
        if text == "shape":
            return "just a string"
        return {"success": True, "response": "fine"}
