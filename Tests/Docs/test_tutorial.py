"""The tutorial's code is the code of Examples/Tutorial, which `make examples-test` builds and tests.

Every fenced code block in docs/tutorial/*.md is checked against the file it claims to be. The
claim is an HTML comment on the last non-blank line before the block (GitHub does not show it):

    <!-- file: Examples/Tutorial/Sources/Todos/Todos.swift -->
        the block is that whole file;
    <!-- file: Examples/Tutorial/Package.swift, with "../switchyard" for "../.." -->
        the block is that whole file with each "../.." written "../switchyard" (as a reader's
        copy differs: a path, a name); several `, with "NEW" for "OLD"` may follow;
    <!-- excerpt: Examples/Tutorial/Sources/todosd/Todosd.swift -->
        the block's lines are lines of that file, consecutive and in order (`, with` too).

Paths are from the repository's root. A Swift block must carry a claim, every block must name
its language (```sh, ```text for output), a claim must be followed by a block, and each Swift
file and Package.swift of Examples/Tutorial must be shown whole somewhere in the tutorial, so
that a reader who types every file has the whole example. Shell commands and output are not
checked here: following the tutorial is (see docs/tutorial/README.md, "How this page is kept true").
"""

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial"
EXAMPLE = REPO / "Examples" / "Tutorial"

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
CLAIM = re.compile(r"^\s*<!--\s*(?P<kind>file|excerpt):\s*(?P<path>[^,\s]+)(?P<rest>.*?)\s*-->\s*$")
WITH = re.compile(r'\s*,\s*with\s+"(?P<new>(?:[^"\\]|\\.)*)"\s+for\s+"(?P<old>(?:[^"\\]|\\.)*)"')
# Languages whose blocks must carry a claim: the code of the example.
CLAIMED_LANGUAGES = {"swift"}


class Block:
    def __init__(self, document, line, language, text, claim):
        self.document = document
        self.line = line  # where the opening fence is, 1-based
        self.language = language
        self.text = text
        self.claim = claim  # the claim's comment line, or None

    def where(self):
        return f"{self.document}:{self.line}"


def blocks(document_name, markdown):
    """The fenced blocks of a Markdown text, each with the comment line before it, if any.

    Returns (blocks, problems): problems are fences without a language, unclosed fences and
    claims that no block follows.
    """
    lines = markdown.split("\n")
    found, problems = [], []
    previous = None  # the last non-blank line outside blocks, with its number
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            if lines[index].strip():
                if previous is not None and CLAIM.match(previous[1]):
                    problems.append(f"{document_name}:{previous[0]}: a claim that no code block follows")
                previous = (index + 1, lines[index])
            index += 1
            continue
        indent, fence, info = len(match["indent"]), match["fence"], match["info"].strip()
        start = index
        body = []
        index += 1
        while index < len(lines):
            closing = FENCE.match(lines[index])
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence) and not closing["info"].strip():
                break
            body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
            index += 1
        else:
            problems.append(f"{document_name}:{start + 1}: a code block that is never closed")
        index += 1
        language = info.split()[0] if info else ""
        if not language:
            problems.append(f"{document_name}:{start + 1}: a code block without a language (```swift, ```sh, ```text)")
        claim = previous[1] if previous is not None and CLAIM.match(previous[1]) else None
        found.append(Block(document_name, start + 1, language, "\n".join(body) + "\n", claim))
        previous = None
    if previous is not None and CLAIM.match(previous[1]):
        problems.append(f"{document_name}:{previous[0]}: a claim that no code block follows")
    return found, problems


def parse_claim(comment):
    """(kind, path, [(old, new), …]) of a claim comment; ValueError when it is malformed."""
    match = CLAIM.match(comment)
    if not match:
        raise ValueError(f"not a claim: {comment.strip()}")
    rest, substitutions = match["rest"], []
    while rest.strip():
        step = WITH.match(rest)
        if not step:
            raise ValueError(f'cannot read {rest.strip()!r}: write , with "NEW" for "OLD"')
        substitutions.append((unescape(step["old"]), unescape(step["new"])))
        rest = rest[step.end():]
    return match["kind"], match["path"], substitutions


def unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def check(block, read):
    """What is wrong with one block, or None. `read(path)` gives a file's text, or None."""
    if block.claim is None:
        if block.language in CLAIMED_LANGUAGES:
            return (
                f"{block.where()}: a {block.language} block that claims no file; put "
                "<!-- file: Examples/Tutorial/… --> or <!-- excerpt: … --> on the line before it"
            )
        return None
    try:
        kind, path, substitutions = parse_claim(block.claim)
    except ValueError as error:
        return f"{block.where()}: {error}"
    text = read(path)
    if text is None:
        return f"{block.where()}: {path} does not exist"
    for old, new in substitutions:
        if old not in text:
            return f'{block.where()}: {path} has no "{old}" to write as "{new}"'
        text = text.replace(old, new)
    if kind == "file":
        if block.text != text:
            return f"{block.where()}: the block is not {path}:\n{first_difference(block.text, text)}"
        return None
    wanted, lines = block.text.rstrip("\n").split("\n"), text.split("\n")
    for start in range(len(lines) - len(wanted) + 1):
        if lines[start:start + len(wanted)] == wanted:
            return None
    return f"{block.where()}: the block is not consecutive lines of {path}:\n{first_difference_in(wanted, lines)}"


def first_difference(shown, actual):
    shown_lines, actual_lines = shown.split("\n"), actual.split("\n")
    for number, (a, b) in enumerate(zip(shown_lines, actual_lines), start=1):
        if a != b:
            return f"  line {number} of the block: {a!r}\n  line {number} of the file:  {b!r}"
    return f"  the block has {len(shown_lines) - 1} lines, the file {len(actual_lines) - 1}"


def first_difference_in(wanted, lines):
    if wanted and wanted[0] not in lines:
        return f"  its first line is nowhere in the file: {wanted[0]!r}"
    start = lines.index(wanted[0])
    for offset, line in enumerate(wanted):
        actual = lines[start + offset] if start + offset < len(lines) else "(end of file)"
        if line != actual:
            return f"  line {offset + 1} of the block: {line!r}\n  the file there:     {actual!r}"
    return "  (no difference found)"


def read_repository_file(path):
    file = (REPO / path).resolve()
    if REPO not in file.parents or not file.is_file():
        return None
    return file.read_text()


def tutorial_blocks():
    documents = sorted(TUTORIAL.glob("*.md"))
    assert documents, f"no Markdown in {TUTORIAL}"
    all_blocks, all_problems = [], []
    for document in documents:
        found, problems = blocks(str(document.relative_to(REPO)), document.read_text())
        all_blocks += found
        all_problems += problems
    return all_blocks, all_problems


def test_every_code_block_is_the_code_it_claims_to_be():
    found, problems = tutorial_blocks()
    assert any(block.claim for block in found), "the tutorial claims no file at all"
    problems += [problem for block in found if (problem := check(block, read_repository_file))]
    assert not problems, "\n".join(problems)


def test_every_file_of_the_example_is_shown_whole():
    found, _ = tutorial_blocks()
    shown = {parse_claim(block.claim)[1] for block in found if block.claim and parse_claim(block.claim)[0] == "file"}
    files = [EXAMPLE / "Package.swift"] + sorted(
        path for folder in ("Sources", "Tests") for path in (EXAMPLE / folder).rglob("*.swift")
    )
    missing = [str(path.relative_to(REPO)) for path in files if str(path.relative_to(REPO)) not in shown]
    assert not missing, "files of the example that the tutorial never shows whole: " + ", ".join(missing)


# The checker itself, on small documents: it must be able to fail.

FILES = {
    "a/One.swift": "import Foundation\n\nlet one = 1\nlet two = 2\n",
    "a/Package.swift": 'dependencies: [.package(path: "../..")]\n',
}


def problems_in(markdown):
    found, problems = blocks("doc.md", markdown)
    return problems + [problem for block in found if (problem := check(block, FILES.get))]


def test_a_whole_file_that_matches_passes():
    assert problems_in("<!-- file: a/One.swift -->\n```swift\nimport Foundation\n\nlet one = 1\nlet two = 2\n```\n") == []


def test_a_changed_line_fails():
    problems = problems_in("<!-- file: a/One.swift -->\n```swift\nimport Foundation\n\nlet one = 2\nlet two = 2\n```\n")
    assert len(problems) == 1 and "line 3 of the block: 'let one = 2'" in problems[0]


def test_a_missing_line_fails():
    assert problems_in("<!-- file: a/One.swift -->\n```swift\nimport Foundation\n\nlet one = 1\n```\n")


def test_an_unmarked_swift_block_fails():
    problems = problems_in("Some prose.\n\n```swift\nlet one = 1\n```\n")
    assert len(problems) == 1 and "claims no file" in problems[0]


def test_a_block_without_a_language_fails():
    assert problems_in("```\nlet one = 1\n```\n")


def test_an_unmarked_shell_block_passes():
    assert problems_in("```sh\nswift build\n```\n") == []


def test_a_claim_of_a_file_that_does_not_exist_fails():
    assert "does not exist" in problems_in("<!-- file: a/Two.swift -->\n```swift\nlet one = 1\n```\n")[0]


def test_a_claim_without_a_block_fails():
    assert "no code block follows" in problems_in("<!-- file: a/One.swift -->\n\nProse.\n")[0]


def test_substitutions_apply_to_the_file():
    markdown = '<!-- file: a/Package.swift, with "../switchyard" for "../.." -->\n```swift\ndependencies: [.package(path: "../switchyard")]\n```\n'
    assert problems_in(markdown) == []
    assert problems_in(markdown.replace('path: "../switchyard"', 'path: "../.."'))


def test_a_substitution_of_text_the_file_lacks_fails():
    markdown = '<!-- file: a/Package.swift, with "x" for "nothing" -->\n```swift\ndependencies: [.package(path: "../..")]\n```\n'
    assert 'has no "nothing"' in problems_in(markdown)[0]


def test_an_excerpt_must_be_consecutive_lines():
    assert problems_in("<!-- excerpt: a/One.swift -->\n```swift\nlet one = 1\nlet two = 2\n```\n") == []
    assert problems_in("<!-- excerpt: a/One.swift -->\n```swift\nimport Foundation\nlet one = 1\n```\n")
    assert problems_in("<!-- excerpt: a/One.swift -->\n```swift\nlet three = 3\n```\n")


def test_an_indented_block_in_a_list_is_read_without_its_indentation():
    markdown = "1. Write it:\n\n   <!-- excerpt: a/One.swift -->\n   ```swift\n   let one = 1\n   ```\n"
    assert problems_in(markdown) == []


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd"])
def test_a_claim_outside_the_repository_is_refused(path):
    assert read_repository_file(path) is None
