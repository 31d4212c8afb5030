"""The bot SDK and sample bots: subclass clients.bot.Bot and play over gRPC or in-process."""
