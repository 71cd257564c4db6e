package dev.quarry.sandbox;

/** A started container whose runner has connected and said Ready, with its endpoint. */
record LiveSandbox(Sandbox sandbox, SandboxEndpoint endpoint) {}
