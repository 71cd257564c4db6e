package dev.quarry.support;

import dev.quarry.store.Database;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

/**
 * What most database tests start with: a throwaway {@link TestDatabase}, a Vert.x instance and the
 * gateway's pool on that database. A test class holds it in an {@code @AutoClose} static field;
 * closing it closes the pool, Vert.x and then drops the database, each even when the one before
 * fails to close.
 */
public final class TestStack implements AutoCloseable {
  private final TestDatabase db;
  private final Vertx vertx;
  private final Pool pool;

  private TestStack(TestDatabase db, Vertx vertx, Pool pool) {
    this.db = db;
    this.vertx = vertx;
    this.pool = pool;
  }

  public static TestStack start() {
    TestDatabase db = TestDatabase.create();
    Vertx vertx = Vertx.vertx();
    return new TestStack(db, vertx, Database.pool(vertx, db.config()));
  }

  public TestDatabase db() {
    return db;
  }

  public Vertx vertx() {
    return vertx;
  }

  public Pool pool() {
    return pool;
  }

  @Override
  public void close() {
    try {
      pool.close().await();
    } finally {
      try {
        vertx.close().await();
      } finally {
        db.close();
      }
    }
  }
}
