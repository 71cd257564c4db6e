package dev.quarry.ingest;

import java.util.ArrayList;
import java.util.List;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** Namespaces and small DOM helpers for reading WordprocessingML. */
final class DocxXml {
  static final String W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
  static final String MC = "http://schemas.openxmlformats.org/markup-compatibility/2006";
  static final String VML = "urn:schemas-microsoft-com:vml";
  static final String WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing";
  static final String PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture";
  static final String A = "http://schemas.openxmlformats.org/drawingml/2006/main";

  private DocxXml() {}

  /** The text under {@code n} (XmlBeans' DOM has no getTextContent). */
  static String text(Node n) {
    if (n.getNodeType() == Node.TEXT_NODE || n.getNodeType() == Node.CDATA_SECTION_NODE) {
      return n.getNodeValue();
    }
    StringBuilder sb = new StringBuilder();
    for (Node c = n.getFirstChild(); c != null; c = c.getNextSibling()) {
      sb.append(text(c));
    }
    return sb.toString();
  }

  static boolean is(Node n, String ns, String local) {
    return n instanceof Element e && ns.equals(e.getNamespaceURI()) && local.equals(e.getLocalName());
  }

  static List<Element> elements(Node parent) {
    List<Element> out = new ArrayList<>();
    for (Node c = parent.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e) {
        out.add(e);
      }
    }
    return out;
  }

  static Element child(Node parent, String ns, String local) {
    for (Node c = parent.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (is(c, ns, local)) {
        return (Element) c;
      }
    }
    return null;
  }

  /** {@code w:<local>/@w:val} of {@code parent}, or null. */
  static String val(Node parent, String local) {
    Element e = parent == null ? null : child(parent, W, local);
    return e == null || !e.hasAttributeNS(W, "val") ? null : e.getAttributeNS(W, "val");
  }

  /** Descendants named {@code ns:local}, in document order, not looking inside matches. */
  static List<Element> descendants(Node parent, String ns, String local) {
    List<Element> out = new ArrayList<>();
    for (Node c = parent.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (is(c, ns, local)) {
        out.add((Element) c);
      } else if (c instanceof Element) {
        out.addAll(descendants(c, ns, local));
      }
    }
    return out;
  }

  /**
   * The one branch of an {@code mc:AlternateContent} to read: its first {@code mc:Choice} (Word
   * writes the modern form there: DrawingML text boxes, math), else its {@code mc:Fallback}. Both
   * hold the same content, so reading both would double it.
   */
  static Element alternative(Element alternateContent) {
    Element choice = child(alternateContent, MC, "Choice");
    return choice != null ? choice : child(alternateContent, MC, "Fallback");
  }
}
