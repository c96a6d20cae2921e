PREFIX = "A says"
