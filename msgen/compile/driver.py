"""One driver for every host: documents in, objects to a sink, findings bounded and counted.

`msgen render`, the kustomize and Argo CD plug-ins and the KRM function all compile through
`Driver`, so what one host checks, every host checks: objects made twice (same kind,
namespace and name) by two documents are an error wherever they come from, and a stream of
thousands of jobs keeps at most MAX_REPORTED findings while counting the rest. The stages
of one document are `pipeline.compile_document`.

A Driver is one compile session: what it remembers between documents (`memo.CompileMemos`)
is its own and goes with it. It changes nothing of the process: the console commands, which
own theirs, pause the cycle collector per document through `around_document`
(`collector.paused`); the library API (`msgen.compile_documents`) does not.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from functools import partial

from ..model.diagnostics import (
    MAX_REPORTED, Diagnostic, InputError, Position, distinct, has_errors, position_key,
)
from ..model.memo import CompileMemos
from ..checks.output_bound import OutputBound
from .pipeline import compile_document
from ..model.plan import Options
from ..model.source import Document, Source, StreamedSource
from ..yamlio.yaml_writer import Verbatim
from ..yamlio.yaml_loader import iter_documents

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable
    from ..yamlio.verbatim import DocumentTexts

    #: Receives the objects of each compiled document, in output order; a sink that writes them
    #: returns the size of the text it wrote (counted against the run's bound, `output_bound`).
    Sink = Callable[[list[dict[str, Any]]], int | None]
    #: What each document compiles and is written within (a console command's collector pause).
    AroundDocument = Callable[[], AbstractContextManager[None]]

#: How many objects of a document the sink gets at a time (`Driver._compile`).
_SINK_PIECE = 64


class Compilation:
    """Everything one run produced: the objects in output order, and the findings."""

    def __init__(self) -> None:
        self.objects: list[dict[str, Any]] = []
        self.diagnostics: list[Diagnostic] = []
        #: the sources findings point into (for excerpts); a stream keeps only those
        self.sources: dict[str, Source] = {}
        self.documents = 0
        self.jobs = 0
        #: findings (and errors among them) a stream counted but did not keep: beyond the
        #: first MAX_REPORTED, only their number is printed, so only their number is held
        self.unshown_findings = 0
        self.unshown_errors = 0

    @property
    def ok(self) -> bool:
        return not self.unshown_errors and not has_errors(self.diagnostics)

    def keep_bounded(self, found: list[Diagnostic]) -> None:
        """Add one document's findings, keeping at most MAX_REPORTED and counting the rest.

        A stream of 34,000 jobs with one warning each would otherwise hold 34,000 findings
        (and the memory they pin) to print 200 of them. Findings of different documents
        never coincide (their positions differ), so counting the rest after removing a
        document's own repeats gives the numbers the full list would.
        """
        found = distinct(found)
        room = max(0, MAX_REPORTED - len(self.diagnostics))
        self.diagnostics.extend(found[:room])
        rest = found[room:]
        self.unshown_findings += len(rest)
        self.unshown_errors += sum(d.is_error for d in rest)


class Driver:
    """Compiles documents one at a time into one Compilation.

    `sink` receives each document's objects as they compile (when the Compilation ends not
    ok, what it received must not be used); with `verbatim`, a document that passes through
    is handed over as a `yamlio.verbatim.Verbatim`, its data with the text it was written as,
    for a sink that writes YAML. `bounded` keeps findings as a stream does (see
    `Compilation.keep_bounded`); otherwise every finding is kept. `around_document` is entered
    for each document's compilation and writing. Past the run's output bound
    (`output_bound`) the document that crossed it has an error and no later one compiles.
    """

    def __init__(
        self,
        options: Options,
        sink: Sink,
        locate: Callable[[Document], Document] | None = None,
        *,
        bounded: bool = False,
        around_document: AroundDocument = nullcontext,
        verbatim: bool = False,
    ):
        self.options = options
        self.verbatim = verbatim
        self.sink = sink
        self.locate = locate
        self.bounded = bounded
        self.around_document = around_document
        self.memos = CompileMemos()
        self.result = Compilation()
        #: where each object's document named it, by one string per object (a small index,
        #: however many jobs a stream holds)
        self.seen: dict[str, Position] = {}
        self.bound = OutputBound(options)

    def add_source(self, source: Source) -> bool:
        """Compile every document of `source`; False when its text stops being YAML part-way:
        that error is then its only finding, as if none of its documents had compiled (they
        leave the duplicate index too), and what the sink received from it must be dropped."""
        result = self.result
        result.sources[source.name] = source
        found: list[Diagnostic] = []
        added: list[str] = []
        documents = jobs = 0
        texts = _Texts(source) if self.verbatim else None
        try:
            for document in iter_documents(source, self.memos.yaml_tags):
                if self.bound.passed:
                    break
                documents += 1
                read = document
                if self.locate is not None:
                    document = self.locate(document)
                    result.sources[document.source.name] = document.source
                written = partial(texts.text, read) if texts is not None else None
                more, is_job = self._compile(document, added, written)
                found.extend(more)
                jobs += is_job
        except InputError as exc:
            for key in added:
                self.seen.pop(key, None)
            result.diagnostics.extend(exc.diagnostics)
            return False
        result.documents += documents
        result.jobs += jobs
        self._keep(found)
        if not found and self.locate is None:
            del result.sources[source.name]  # no finding to show an excerpt of: free its text
            if isinstance(source, StreamedSource):
                source.close()
        return True

    def add_document(self, document: Document) -> list[Diagnostic]:
        """Compile one document a host made (a KRM item); its findings are returned too."""
        self.result.sources[document.source.name] = document.source
        found, is_job = self._compile(document, None)
        self.result.documents += 1
        self.result.jobs += is_job
        self._keep(found)
        return found

    def _compile(
        self, document: Document, added: list[str] | None, written: Callable[[], str | None] | None = None
    ) -> tuple[list[Diagnostic], bool]:
        with self.around_document():
            objects, diagnostics, is_job = compile_document(document, self.options, self.memos)
            if written is not None and not is_job and len(objects) == 1 and objects[0] is document.data:
                text = written()  # passed through whole: the sink gets it as written
                if text is not None:
                    objects = [Verbatim(document.data, text)]
            found = sorted(diagnostics, key=position_key)
            found.extend(duplicate_objects(document, objects, self.seen, added))
            # A few objects at a time, so that one job past the bound stops there (a job of
            # 9,999 pods with a 50 KB env value would otherwise be written whole first).
            for start in range(0, len(objects), _SINK_PIECE):
                piece = objects[start : start + _SINK_PIECE]
                passed = self.bound.add(document, len(piece), self.sink(piece))
                if passed is not None:
                    found.append(passed)
                if self.bound.passed:
                    break
            # Dropped within `around_document`: a streaming sink has written them, and a
            # collection that follows need not walk them.
            del objects
        return found, is_job

    def _keep(self, found: list[Diagnostic]) -> None:
        if self.bounded:
            self.result.keep_bounded(found)
        else:
            self.result.diagnostics.extend(found)


class _Texts:
    """A source's documents as written (`yamlio.verbatim`), cut out on the first document that
    passes through: a render of jobs alone loads none of it."""

    __slots__ = ("source", "found")

    def __init__(self, source: Source):
        self.source = source
        self.found: DocumentTexts | None = None

    def text(self, document: Document) -> str | None:
        if self.found is None:
            from ..yamlio.verbatim import DocumentTexts

            self.found = DocumentTexts(self.source)
        return self.found.text(document)


def compile_sources(
    sources: list[Source],
    options: Options,
    locate: Callable[[Document], Document] | None = None,
    around_document: AroundDocument = nullcontext,
) -> Compilation:
    """Compile every document; `locate` may re-position documents a plug-in host re-wrote."""
    objects: list[dict[str, Any]] = []
    driver = Driver(options, objects.extend, locate, around_document=around_document)
    for source in sources:
        kept = len(objects)
        if not driver.add_source(source):
            del objects[kept:]
    driver.result.objects = objects
    return driver.result


def compile_stream(
    sources: Iterable[Source],
    options: Options,
    sink: Sink,
    locate: Callable[[Document], Document] | None = None,
    around_document: AroundDocument = nullcontext,
    verbatim: bool = False,
) -> Compilation:
    """Compile document by document, handing each document's objects to `sink` as they come
    (with `verbatim`, a document that passes through as written: `Driver`).

    One document is held at a time (with its source's text, unless that is streamed), so
    memory does not grow with the number of jobs; the returned Compilation has the findings,
    not the objects. When the Compilation is not ok, what `sink` received must not be used.
    """
    driver = Driver(options, sink, locate, bounded=True, around_document=around_document, verbatim=verbatim)
    for source in sources:
        if driver.bound.passed:
            break
        driver.add_source(source)
    return driver.result


def duplicate_objects(
    document: Document,
    objects: list[dict[str, Any]],
    seen: dict[str, Position],
    added: list[str] | None = None,
) -> list[Diagnostic]:
    """Objects of `document` that an earlier document made too (same kind, namespace and name):
    the cluster would keep one of them. `seen` remembers where each object's document named it,
    by one string per object (a small index, however many jobs a stream holds); the keys it
    gains are appended to `added`.
    """
    clashes: dict[Position, list[str]] = {}
    here = document.positions.at(("metadata", "name"))
    for obj in objects:
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
            continue
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        namespace = str(metadata.get("namespace") or "")
        kind = str(obj.get("kind"))
        key = f"{group}\0{kind}\0{namespace}\0{metadata['name']}"
        earlier = seen.setdefault(key, here)
        if earlier is here:
            if added is not None:
                added.append(key)
        else:
            shown = f"{kind} {namespace + '/' if namespace else ''}{metadata['name']}"
            clashes.setdefault(earlier, []).append(shown)
    out = []
    for where, names in clashes.items():
        more = f" (and {len(names) - 1} more object(s))" if len(names) > 1 else ""
        out.append(
            document.diagnostic(
                ("metadata", "name"),
                f"this document makes {names[0]}{more}, which the document at {where.file}:"
                f"{where.line}:{where.column} makes too; accepted: one object per kind, "
                "namespace and name (rename a job, or give it another namespace)",
            )
        )
    return out
