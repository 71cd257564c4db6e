package dev.quarry.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Office Math (OMML, {@code m:oMath}) as LaTeX, the way docling writes formulas: fractions,
 * scripts, radicals, n-ary operators, delimiters, matrices, equation arrays, functions, limits,
 * accents, bars, boxes and group characters each have their LaTeX form; any other element gives
 * the LaTeX of its children, so no text of a formula is ever lost to an element this class does
 * not know.
 */
final class Omml {
  static final String NS = "http://schemas.openxmlformats.org/officeDocument/2006/math";
  private static final String W = DocxXml.W;

  private static final Map<String, String> SYMBOLS = Map.ofEntries(
      Map.entry("α", "\\alpha"), Map.entry("β", "\\beta"), Map.entry("γ", "\\gamma"), Map.entry("δ", "\\delta"),
      Map.entry("ε", "\\epsilon"), Map.entry("ζ", "\\zeta"), Map.entry("η", "\\eta"), Map.entry("θ", "\\theta"),
      Map.entry("ι", "\\iota"), Map.entry("κ", "\\kappa"), Map.entry("λ", "\\lambda"), Map.entry("μ", "\\mu"),
      Map.entry("ν", "\\nu"), Map.entry("ξ", "\\xi"), Map.entry("π", "\\pi"), Map.entry("ρ", "\\rho"),
      Map.entry("σ", "\\sigma"), Map.entry("τ", "\\tau"), Map.entry("υ", "\\upsilon"), Map.entry("φ", "\\phi"),
      Map.entry("χ", "\\chi"), Map.entry("ψ", "\\psi"), Map.entry("ω", "\\omega"), Map.entry("Γ", "\\Gamma"),
      Map.entry("Δ", "\\Delta"), Map.entry("Θ", "\\Theta"), Map.entry("Λ", "\\Lambda"), Map.entry("Ξ", "\\Xi"),
      Map.entry("Π", "\\Pi"), Map.entry("Σ", "\\Sigma"), Map.entry("Φ", "\\Phi"), Map.entry("Ψ", "\\Psi"),
      Map.entry("Ω", "\\Omega"), Map.entry("∞", "\\infty"), Map.entry("×", "\\times"), Map.entry("·", "\\cdot"),
      Map.entry("÷", "\\div"), Map.entry("±", "\\pm"), Map.entry("∓", "\\mp"), Map.entry("≤", "\\leq"),
      Map.entry("≥", "\\geq"), Map.entry("≠", "\\neq"), Map.entry("≈", "\\approx"), Map.entry("≡", "\\equiv"),
      Map.entry("∝", "\\propto"), Map.entry("→", "\\rightarrow"), Map.entry("←", "\\leftarrow"),
      Map.entry("⇒", "\\Rightarrow"), Map.entry("⇔", "\\Leftrightarrow"), Map.entry("∈", "\\in"),
      Map.entry("∉", "\\notin"), Map.entry("⊂", "\\subset"), Map.entry("⊆", "\\subseteq"), Map.entry("∪", "\\cup"),
      Map.entry("∩", "\\cap"), Map.entry("∅", "\\emptyset"), Map.entry("∀", "\\forall"), Map.entry("∃", "\\exists"),
      Map.entry("∂", "\\partial"), Map.entry("∇", "\\nabla"), Map.entry("…", "\\ldots"), Map.entry("⋯", "\\cdots"),
      Map.entry("−", "-"), Map.entry("∗", "*"), Map.entry("′", "'"), Map.entry("∼", "\\sim"),
      Map.entry("≪", "\\ll"), Map.entry("≫", "\\gg"), Map.entry("¬", "\\neg"), Map.entry("∧", "\\wedge"),
      Map.entry("∨", "\\vee"), Map.entry("°", "^{\\circ}"));

  private static final Map<String, String> NARY = Map.ofEntries(
      Map.entry("∑", "\\sum"), Map.entry("∏", "\\prod"), Map.entry("∐", "\\coprod"), Map.entry("∫", "\\int"),
      Map.entry("∬", "\\iint"), Map.entry("∭", "\\iiint"), Map.entry("∮", "\\oint"), Map.entry("∯", "\\oiint"), Map.entry("∰", "\\oiiint"),
      Map.entry("⋃", "\\bigcup"), Map.entry("⋂", "\\bigcap"), Map.entry("⋁", "\\bigvee"), Map.entry("⋀", "\\bigwedge"),
      Map.entry("⨁", "\\bigoplus"), Map.entry("⨂", "\\bigotimes"));

  private static final Map<String, String> ACCENTS = Map.ofEntries(
      Map.entry("\u0302", "\\hat"), Map.entry("^", "\\hat"), Map.entry("\u0303", "\\tilde"), Map.entry("~", "\\tilde"),
      Map.entry("\u0304", "\\bar"), Map.entry("\u0305", "\\overline"), Map.entry("\u0307", "\\dot"),
      Map.entry("\u0308", "\\ddot"), Map.entry("\u20D7", "\\vec"), Map.entry("\u030C", "\\check"),
      Map.entry("\u0301", "\\acute"), Map.entry("\u0300", "\\grave"), Map.entry("\u0306", "\\breve"));

  private static final List<String> FUNCTIONS = List.of("sin", "cos", "tan", "cot", "sec", "csc", "arcsin",
      "arccos", "arctan", "sinh", "cosh", "tanh", "coth", "log", "ln", "lg", "exp", "lim", "max", "min", "sup",
      "inf", "det", "dim", "ker", "gcd", "deg", "arg", "Pr");

  private Omml() {}

  /** The LaTeX of an {@code m:oMath} (or any OMML element). */
  static String latex(Element math) {
    return children(math).strip().replaceAll("\\s{2,}", " ");
  }

  private static String children(Node n) {
    StringBuilder sb = new StringBuilder();
    for (Node c = n.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e) {
        sb.append(element(e));
      }
    }
    return sb.toString();
  }

  private static String element(Element e) {
    String ns = e.getNamespaceURI();
    String name = e.getLocalName();
    if (W.equals(ns)) {
      // A Word run inside math (rare), or its properties.
      return name.equals("r") || name.equals("t") ? text(DocxXml.text(e)) : name.endsWith("Pr") ? "" : children(e);
    }
    if (!NS.equals(ns)) {
      return children(e);
    }
    if (name.endsWith("Pr")) {
      return "";
    }
    return switch (name) {
      case "r" -> run(e);
      case "f" -> fraction(e);
      case "sSup" -> group(arg(e, "e")) + "^{" + arg(e, "sup") + "}";
      case "sSub" -> group(arg(e, "e")) + "_{" + arg(e, "sub") + "}";
      case "sSubSup" -> group(arg(e, "e")) + "_{" + arg(e, "sub") + "}^{" + arg(e, "sup") + "}";
      case "sPre" -> "{}_{" + arg(e, "sub") + "}^{" + arg(e, "sup") + "}" + group(arg(e, "e"));
      case "rad" -> radical(e);
      case "nary" -> nary(e);
      case "d" -> delimiter(e);
      case "m" -> matrix(e);
      case "eqArr" -> equationArray(e);
      case "func" -> arg(e, "fName") + "(" + arg(e, "e") + ")";
      case "fName" -> functionName(children(e));
      case "limLow" -> group(arg(e, "e")) + "_{" + arg(e, "lim") + "}";
      case "limUpp" -> "\\overset{" + arg(e, "lim") + "}{" + arg(e, "e") + "}";
      case "acc" -> ACCENTS.getOrDefault(property(e, "accPr", "chr", "\u0302"), "\\hat") + "{" + arg(e, "e") + "}";
      case "bar" -> ("bot".equals(property(e, "barPr", "pos", "bot")) ? "\\underline{" : "\\overline{")
          + arg(e, "e") + "}";
      case "borderBox" -> "\\boxed{" + arg(e, "e") + "}";
      case "groupChr" -> groupCharacter(e);
      default -> children(e);
    };
  }

  private static String run(Element r) {
    StringBuilder sb = new StringBuilder();
    boolean normal = false;
    for (Node c = r.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e) {
        if (e.getLocalName().equals("rPr") && NS.equals(e.getNamespaceURI())) {
          normal = child(e, "nor") != null;
        } else if (e.getLocalName().equals("t")) {
          sb.append(DocxXml.text(e));
        }
      }
    }
    String t = sb.toString();
    if (normal && !t.isBlank()) {
      return " \\text{" + t + "} ";
    }
    return text(t);
  }

  /** Math text with its symbols as LaTeX commands, and a function name as its operator. */
  private static String text(String t) {
    if (FUNCTIONS.contains(t.strip())) {
      return "\\" + t.strip();
    }
    StringBuilder sb = new StringBuilder();
    t.codePoints().forEach(cp -> {
      String s = new String(Character.toChars(cp));
      String cmd = SYMBOLS.get(s);
      sb.append(cmd == null ? s : " " + cmd + " ");
    });
    return sb.toString();
  }

  private static String functionName(String name) {
    String n = name.strip();
    return FUNCTIONS.contains(n) ? "\\" + n : n.startsWith("\\") ? n : "\\operatorname{" + n + "}";
  }

  private static String fraction(Element f) {
    String type = property(f, "fPr", "type", "bar");
    String num = arg(f, "num");
    String den = arg(f, "den");
    return switch (type) {
      case "lin" -> group(num) + "/" + group(den);
      case "noBar" -> "\\genfrac{}{}{0pt}{}{" + num + "}{" + den + "}";
      default -> "\\frac{" + num + "}{" + den + "}";
    };
  }

  private static String radical(Element rad) {
    String degree = arg(rad, "deg");
    boolean hidden = "1".equals(property(rad, "radPr", "degHide", "0")) || "on".equals(property(rad, "radPr", "degHide", "0"))
        || "true".equals(property(rad, "radPr", "degHide", "0"));
    return hidden || degree.isBlank() ? "\\sqrt{" + arg(rad, "e") + "}" : "\\sqrt[" + degree + "]{" + arg(rad, "e") + "}";
  }

  private static String nary(Element n) {
    String chr = property(n, "naryPr", "chr", "∫");
    String op = NARY.getOrDefault(chr, chr);
    String sub = arg(n, "sub");
    String sup = arg(n, "sup");
    String scripts = (sub.isBlank() ? "" : "_{" + sub + "}") + (sup.isBlank() ? "" : "^{" + sup + "}");
    String body = group(arg(n, "e"));
    return op + scripts + (scripts.isEmpty() && op.startsWith("\\") && startsWithLetter(body) ? " " : "") + body;
  }

  private static String delimiter(Element d) {
    String begin = property(d, "dPr", "begChr", "(");
    String end = property(d, "dPr", "endChr", ")");
    String sep = property(d, "dPr", "sepChr", "|");
    List<String> parts = new ArrayList<>();
    for (Element e : all(d, "e")) {
      parts.add(children(e));
    }
    return "\\left" + fence(begin) + String.join(sep, parts) + "\\right" + fence(end);
  }

  private static String fence(String chr) {
    return switch (chr) {
      case "" -> ".";
      case "{" -> "\\{";
      case "}" -> "\\}";
      case "⟨", "〈" -> "\\langle ";
      case "⟩", "〉" -> "\\rangle ";
      case "‖" -> "\\|";
      case "⌊" -> "\\lfloor ";
      case "⌋" -> "\\rfloor ";
      case "⌈" -> "\\lceil ";
      case "⌉" -> "\\rceil ";
      default -> chr;
    };
  }

  private static String matrix(Element m) {
    List<String> rows = new ArrayList<>();
    for (Element mr : all(m, "mr")) {
      List<String> cells = new ArrayList<>();
      for (Element e : all(mr, "e")) {
        cells.add(children(e));
      }
      rows.add(String.join(" & ", cells));
    }
    return "\\begin{matrix}" + String.join(" \\\\ ", rows) + "\\end{matrix}";
  }

  private static String equationArray(Element a) {
    List<String> rows = new ArrayList<>();
    for (Element e : all(a, "e")) {
      rows.add(children(e));
    }
    if (rows.size() == 1) {
      return rows.get(0);
    }
    return "\\begin{array}{l}" + String.join(" \\\\ ", rows) + "\\end{array}";
  }

  private static String groupCharacter(Element g) {
    String chr = property(g, "groupChrPr", "chr", "⏟");
    String body = arg(g, "e");
    return switch (chr) {
      case "⏟" -> "\\underbrace{" + body + "}";
      case "⏞" -> "\\overbrace{" + body + "}";
      default -> ("top".equals(property(g, "groupChrPr", "pos", "bot")) ? "\\overset{" : "\\underset{")
          + text(chr).strip() + "}{" + body + "}";
    };
  }

  /** The LaTeX of the first {@code m:<name>} child. */
  private static String arg(Element parent, String name) {
    Element c = child(parent, name);
    return c == null ? "" : children(c).strip();
  }

  /** Braces around a multi-symbol base so a script binds to all of it. */
  private static String group(String s) {
    String t = s.strip();
    return t.codePointCount(0, t.length()) <= 1 || t.startsWith("\\left") || t.matches("\\\\[a-zA-Z]+")
        ? t : "{" + t + "}";
  }

  private static boolean startsWithLetter(String s) {
    return !s.isEmpty() && Character.isLetter(s.codePointAt(0));
  }

  /** {@code m:<pr>/m:<name>/@m:val} of an element, or the default OMML gives it. */
  private static String property(Element e, String pr, String name, String fallback) {
    Element p = child(e, pr);
    Element v = p == null ? null : child(p, name);
    if (v == null) {
      return fallback;
    }
    String val = v.getAttributeNS(NS, "val");
    return v.hasAttributeNS(NS, "val") ? val : name.equals("chr") || name.endsWith("Chr") ? fallback : "1";
  }

  static Element child(Node parent, String name) {
    for (Node c = parent.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e && NS.equals(e.getNamespaceURI()) && e.getLocalName().equals(name)) {
        return e;
      }
    }
    return null;
  }

  private static List<Element> all(Node parent, String name) {
    List<Element> out = new ArrayList<>();
    for (Node c = parent.getFirstChild(); c != null; c = c.getNextSibling()) {
      if (c instanceof Element e && NS.equals(e.getNamespaceURI()) && e.getLocalName().equals(name)) {
        out.add(e);
      }
    }
    return out;
  }
}
