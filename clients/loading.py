"""Loading a bot given as MODULE:CLASS or FILE.py:CLASS, with errors that say how to fix them."""

from __future__ import annotations

import importlib
import importlib.util
import traceback
from pathlib import Path
from types import ModuleType

from clients.bot import Bot

EXAMPLE = "e.g. mybot.py:MyBot (a file) or clients.random_bot:RandomBot (a module)"


class BotLoadError(ValueError):
    """A bot that cannot be loaded; the message says what is wrong and how to fix it."""


def load_bot(spec: str) -> Bot:
    """A new bot from `MODULE:CLASS` (e.g. clients.random_bot:RandomBot or mybot.py:MyBot)."""
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise BotLoadError(f"expected MODULE:CLASS, {EXAMPLE}, not {spec!r}")
    module = _module(module_name)
    cls = getattr(module, class_name, None)
    if cls is None:
        found = [n for n, v in vars(module).items() if _is_bot(v) and v.__module__ == module.__name__]
        hint = f"its Bot subclasses: {', '.join(found)}" if found else "it defines no Bot subclass"
        raise BotLoadError(f"{module_name} has no {class_name!r}; {hint}")
    if not _is_bot(cls):
        what = "a class not derived from Bot"
        if not isinstance(cls, type):
            what = f"a {type(cls).__name__}, not a class"
        raise BotLoadError(
            f"{spec} is {what}: a bot is a subclass of clients.bot.Bot (from clients.bot import Bot; "
            f"class {class_name}(Bot): ...)"
        )
    try:
        bot: Bot = cls()
    except Exception as error:
        raise BotLoadError(f"{spec}: making the bot ({class_name}()) raised {_error(error)}") from None
    return bot


def _is_bot(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Bot) and value is not Bot


def _module(name: str) -> ModuleType:
    """The module of a bot: a file (NAME.py) run as a module of its own, or an importable one."""
    try:
        return _from_file(name) if name.endswith(".py") else importlib.import_module(name)
    except BotLoadError:
        raise
    except SyntaxError as error:
        where = f"{error.filename}, line {error.lineno}" if error.lineno else str(error.filename or name)
        code = f": {error.text.strip()}" if error.text else ""
        raise BotLoadError(f"{where}: {error.msg}{code}") from None
    except ModuleNotFoundError as error:
        if error.name and (name == error.name or name.startswith(error.name + ".")):
            if Path(f"{name}.py").is_file():
                hint = f"; a file is given with its .py: {name}.py:CLASS"
            else:
                hint = f" (here: {Path.cwd()}); give a file as FILE.py:CLASS, or install the package"
            raise BotLoadError(f"no module named {error.name!r}{hint}") from None
        raise BotLoadError(f"importing {name} failed: {_error(error)}") from None
    except Exception as error:
        raise BotLoadError(f"importing {name} raised {_error(error)}") from None


def _from_file(name: str) -> ModuleType:
    path = Path(name)
    if not path.is_file():
        raise BotLoadError(f"no file {name} (looked in {Path.cwd()})")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise BotLoadError(f"cannot load {name} as Python")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _error(error: BaseException) -> str:
    """An exception and where in the bot's own code it was raised."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "importlib" not in f.filename]
    where = f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"
