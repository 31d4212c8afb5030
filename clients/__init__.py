"""The bot SDK and sample bots: subclass clients.bot.Bot and play over gRPC or in-process.

- clients.bot: Bot (override play(); every other decision has a safe default) and the Harness
  that checks every answer before it is sent.
- clients.local: play_match(bots) and play_many(factories, games) on the engine, no network.
- clients.connect: connect()/run() a bot on a referee; `tichu bot MODULE:CLASS --server ...`.
- clients.random_bot, clients.heuristic_bot, clients.showcase_bot: sample bots to start from.
"""
