# SPDX-License-Identifier: Apache-2.0
from typing import Optional

class SplitzipError(ValueError):
    status: str
    message: str
    code: Optional[int]
    corrupt_block: Optional[int]
    def __init__(
        self, status: str, message: str, code: Optional[int] = ..., corrupt_block: Optional[int] = ...
    ) -> None: ...

def error(status: str, message: str) -> SplitzipError: ...
def invalid(message: str) -> SplitzipError: ...
