package dev.quarry.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.ByteBuffersDirectory;

/**
 * The classic baseline: Lucene with its EnglishAnalyzer and default BM25Similarity, the query a
 * disjunction of its analysed terms (what the classic query parser makes of plain words).
 */
public final class LuceneBm25 implements Retriever {
  private static final String ID = "id";
  private static final String BODY = "body";

  private final Analyzer analyzer = new EnglishAnalyzer();
  private final ByteBuffersDirectory directory = new ByteBuffersDirectory();
  private final DirectoryReader reader;
  private final IndexSearcher searcher;

  public LuceneBm25(List<TestCollection.Doc> docs) throws IOException {
    try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig(analyzer))) {
      for (TestCollection.Doc d : docs) {
        Document doc = new Document();
        doc.add(new StoredField(ID, d.id()));
        doc.add(new TextField(BODY, d.text(), Field.Store.NO));
        writer.addDocument(doc);
      }
    }
    reader = DirectoryReader.open(directory);
    searcher = new IndexSearcher(reader);
  }

  @Override
  public String name() {
    return "Lucene BM25 (EnglishAnalyzer)";
  }

  @Override
  public List<String> rank(String query, float[] vector, int k) throws IOException {
    BooleanQuery.Builder q = new BooleanQuery.Builder();
    try (TokenStream ts = analyzer.tokenStream(BODY, query)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) {
        q.add(new TermQuery(new Term(BODY, term.toString())), BooleanClause.Occur.SHOULD);
      }
      ts.end();
    }
    List<String> ids = new ArrayList<>(k);
    var storedFields = searcher.storedFields();
    for (ScoreDoc hit : searcher.search(q.build(), k).scoreDocs) {
      ids.add(storedFields.document(hit.doc).get(ID));
    }
    return ids;
  }

  @Override
  public void close() throws IOException {
    reader.close();
    directory.close();
    analyzer.close();
  }
}
