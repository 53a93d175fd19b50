"""msgen as a Helm post-renderer: the jobs a chart renders come out compiled, nothing else moves.

Helm (3: `helm install --post-renderer EXECUTABLE`; 4: a `postrenderer/v1` plug-in) writes
every manifest its templates rendered to the post-renderer's stdin, each as `---`, a
`# Source: <chart>/templates/<file>` comment and the document, and installs exactly what
comes back on stdout, in that order (it creates kind after kind as they come, so a job's
Services still precede its workloads). So the stream is cut into its documents as text:
each document that holds a job kind msgen compiles is replaced, where it stood, by the
objects msgen makes of it (each under the same `# Source:` comment); every other document
is written back byte for byte, comments and all. Positions in messages are
`<chart>/templates/<file>:LINE:COLUMN`, LINE counted in the document as the template rendered
it (what `helm template` prints under that comment).

On any error nothing is written to stdout and msgen exits 1: Helm then stops the install
or upgrade before it applies anything and shows the post-renderer's stderr (Helm 3).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ...model.source import Source

if TYPE_CHECKING:
    from ...compile.driver import AroundDocument, Compilation
    from ...model.plan import Options

#: A YAML document marker line: `---` alone or followed by a space and more.
_MARKER = re.compile(r"---(?:[ \t].*)?\r?\n?\Z")
_END = re.compile(r"\.\.\.(?:[ \t].*)?\r?\n?\Z")
_SOURCE = re.compile(r"#\s*Source:\s*(\S.*?)\s*\r?\n?\Z")
#: Where a document without Helm's `# Source:` comment came from.
STDIN = "<stdin>"
#: Helm 4 names each document's template in this annotation instead of a comment, and puts
#: what comes back under the template whose name it carries (else `generated-by-postrender-N`).
FILENAME_ANNOTATION = "postrenderer.helm.sh/postrender-filename"


class Piece(NamedTuple):
    """One document of Helm's stream: its text as Helm wrote it, where its template is, and
    the document itself (after the marker and `# Source:` lines) as msgen reads it."""

    text: str
    #: Helm 3's `# Source:` path, else STDIN
    source: str
    body: str
    #: the text before `body` that the compiled objects are written under (marker, comments)
    head: str
    #: lines of the stream before `body`
    offset: int = 0


def split(text: str) -> list[Piece]:
    """Helm's stream cut into its documents; joined, their texts are `text` again."""
    pieces: list[Piece] = []
    lines = text.splitlines(keepends=True)
    start = 0
    for number, line in enumerate(lines):
        if number > start and _MARKER.match(line):
            pieces.append(_piece(lines[start:number], start))
            start = number
        elif _END.match(line):
            pieces.append(_piece(lines[start : number + 1], start))
            start = number + 1
    if start < len(lines):
        pieces.append(_piece(lines[start:], start))
    return pieces


def _piece(lines: list[str], first: int) -> Piece:
    """A document's lines (`first`: the number of stream lines before them)."""
    head_end = 0
    source = None
    if lines and _MARKER.match(lines[0]):
        head_end = 1
    for index in range(head_end, len(lines)):
        found = _SOURCE.match(lines[index])
        if found:
            source, head_end = found.group(1), index + 1
            break
        if lines[index].strip() and not lines[index].lstrip().startswith("#"):
            break
    text = "".join(lines)
    head = "".join(lines[:head_end])
    if source is None:
        return Piece(text, STDIN, "".join(lines), head, first)
    return Piece(text, source, "".join(lines[head_end:]), head, first + head_end)


def holds_job(piece: Piece) -> bool:
    """Whether msgen compiles this document (a job kind, at the top or in a `kind: List`; a
    document that is not YAML but names a job kind too, so that its error is reported)."""
    from ..job_text import holds_job as text_holds_job

    return text_holds_job(piece.body)


class Rendered(NamedTuple):
    """What the post-renderer writes, or the findings that stop it."""

    text: str
    compilation: Compilation


def post_render(text: str, options: Options, around_document: AroundDocument | None = None) -> Rendered:
    """`text` (Helm's stream) with every job document replaced by its objects; the
    Compilation says whether that succeeded (when not, `text` must not be used)."""
    from contextlib import nullcontext

    from ...compile.driver import Driver
    from ...yamlio.emit import to_yaml

    pieces = split(text)
    compiled: dict[int, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] = []
    driver = Driver(options, current.extend, around_document=around_document or nullcontext)
    names: dict[str, int] = {}
    for index, piece in enumerate(pieces):
        if not holds_job(piece):
            continue
        template = template_of(piece.body)
        source = template or piece.source
        names[source] = names.get(source, 0) + 1
        name = source if names[source] == 1 else f"{source}, document {names[source]}"
        # Lines count from the document's start under a template's name, else in the stream.
        body = "\n" * piece.offset + piece.body if source == STDIN else piece.body
        current.clear()
        if driver.add_source(Source(name, body)):
            compiled[index] = [_under(obj, template) for obj in current]
    out = []
    follows_compiled = False
    for index, piece in enumerate(pieces):
        if index not in compiled:
            # A document that followed `...` without `---` must not run on into the last
            # compiled object.
            separate = follows_compiled and not _MARKER.match(piece.text.partition("\n")[0] + "\n")
            out.append(("---\n" if separate else "") + piece.text)
            follows_compiled = False
            continue
        head = piece.head if piece.head.startswith("---") else "---\n" + piece.head
        for obj in compiled[index]:
            out.append(head + to_yaml([obj]))
        follows_compiled = bool(compiled[index])
    return Rendered("".join(out), driver.result)


def template_of(body: str) -> str | None:
    """The template Helm 4 says a document came from (FILENAME_ANNOTATION), or None."""
    if FILENAME_ANNOTATION not in body:
        return None
    import yaml

    try:
        document = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    found = annotations.get(FILENAME_ANNOTATION) if isinstance(annotations, dict) else None
    return found if isinstance(found, str) and found else None


def _under(obj: dict[str, Any], template: str | None) -> dict[str, Any]:
    """`obj`, carrying the job's template name back to Helm 4 (which removes it again)."""
    if template is None:
        return obj
    metadata = dict(obj["metadata"])
    metadata["annotations"] = {**(metadata.get("annotations") or {}), FILENAME_ANNOTATION: template}
    return {**obj, "metadata": metadata}
