"""Build-time generators: the files msgen's package and docs carry that are made from the code or
from test dependencies (`python -m tests.generators.NAME`, run from the checkout). They are not
part of the installed package; the tests fail, naming the command, while a generated file is stale."""
