"""Text of any origin made fit for an XML report (JUnit).

XML 1.0 forbids most C0 control characters (all but tab, newline and carriage return), the
surrogates and U+FFFE/U+FFFF, even escaped as character references: one of them in a suite
name, a case id or a model's answer makes the whole file not well-formed, and a CI system
then drops the report. Each is written as a visible `\\xNN` (`\\uNNNN`) instead, as the
terminal shows control characters (engine.report.terminal), and so are DEL and the C1
controls, which XML allows but a terminal showing the file would obey.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold (and DEL, C1) shown as `\\xNN`."""
    return _NOT_XML.sub(_visible, text)


def xml_safe(root: ET.Element) -> ET.Element:
    """`root` with every tag's text, tail and attribute value made `xml_text`, in place."""
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        if element.tail:
            element.tail = xml_text(element.tail)
        for key, value in element.attrib.items():
            element.set(key, xml_text(value))
    return root


def xml_document(root: ET.Element) -> str:
    """The report as text: made safe, indented, with its declaration and a final newline."""
    xml_safe(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
