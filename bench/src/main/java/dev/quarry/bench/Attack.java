package dev.quarry.bench;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * One way the noisy tenant does its worst, as an outsider with a tenant key would: started before
 * the quiet tenant's measured phase, checked at its end (that it really was doing what it says),
 * stopped after it. Every attack is bounded in time: nothing it starts outlives {@link #stop}.
 */
interface Attack {
  /** The row's name in the figures table. */
  String name();

  /** What it does, for the section's list of cases. */
  String how();

  /** Starts it and returns once it is in force (or its bound to get there has passed). */
  void start() throws Exception;

  /** What it was doing at the end of the measured phase, checked from the outside: for the report. */
  String check() throws Exception;

  /** Stops it: every connection closed, every sandbox it held given back. */
  void stop() throws Exception;

  /** What the attacks share: the gateway's port, the noisy tenant's key, a client and the gateway's metrics. */
  record Target(int port, String key, HttpClient http, Supplier<Scrape> metrics) {
    static final Duration SHORT = Duration.ofSeconds(30);
  }
}
