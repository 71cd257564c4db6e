package dev.quarry.ingest;

import java.util.Set;
import org.commonmark.node.Text;
import org.commonmark.parser.beta.InlineContentParser;
import org.commonmark.parser.beta.InlineContentParserFactory;
import org.commonmark.parser.beta.InlineParserState;
import org.commonmark.parser.beta.ParsedInline;
import org.commonmark.parser.beta.Position;
import org.commonmark.parser.beta.Scanner;

/**
 * A {@code <} whose {@code >} is not within {@link #LOOKAHEAD} characters is plain text. commonmark's
 * own parsers of autolinks and inline HTML look for the {@code >} through the rest of the paragraph
 * from every {@code <}: a paragraph of {@code "<a "} repeated took quadratic time (160 KB: 10 s of
 * CPU; 1 MB: more than 180 s, with nothing to stop it; red team round 8). Tried before commonmark's
 * (custom inline parsers come first), this one lets them see only a {@code <} whose {@code >} is
 * near, so each of their scans is bounded. No autolink is that long (it cannot hold a space), and
 * an inline HTML tag longer than this is taken as its text.
 */
final class MarkdownAngles implements InlineContentParserFactory {
  static final int LOOKAHEAD = 2_048;

  @Override
  public Set<Character> getTriggerCharacters() {
    return Set.of('<');
  }

  @Override
  public InlineContentParser create() {
    return MarkdownAngles::tryParse;
  }

  private static ParsedInline tryParse(InlineParserState state) {
    Scanner scanner = state.scanner();
    scanner.next(); // the '<'
    Position afterAngle = scanner.position();
    for (int i = 0; i < LOOKAHEAD && scanner.hasNext(); i++) {
      if (scanner.peek() == '>') {
        return ParsedInline.none(); // near: commonmark's parsers decide what it is
      }
      scanner.next();
    }
    return ParsedInline.of(new Text("<"), afterAngle);
  }
}
