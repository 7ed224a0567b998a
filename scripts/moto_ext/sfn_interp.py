"""(placeholder: being written)"""


def install() -> None:
    pass
