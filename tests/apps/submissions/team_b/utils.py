PREFIX = "B says"
