package dev.quarry.tenancy;

/** A key just created: the one time the key itself is known. */
public record NewKey(ApiKey key, String secret) {}
