package dev.quarry;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The gateway's layers, held by its build: a ground floor (configuration, telemetry) that every
 * part stands on and that stands on nothing of Quarry's; the parts, each using only those below
 * it; the wiring on top, and the command line above that. No exceptions are listed here: a new
 * dependency that points up fails the build and has to be designed away.
 */
@AnalyzeClasses(packages = "dev.quarry", importOptions = {ImportOption.DoNotIncludeTests.class, ImportOption.DoNotIncludeJars.class})
class ArchitectureTest {

  @ArchTest
  static final ArchRule layersPointDown = layeredArchitecture().consideringOnlyDependenciesInLayers()
      .layer("Entry").definedBy("dev.quarry.cli..")
      .layer("Wiring").definedBy("dev.quarry.gateway..")
      .layer("Http").definedBy("dev.quarry.api..")
      .layer("Agent").definedBy("dev.quarry.agent..")
      .layer("Callbacks").definedBy("dev.quarry.callbacks..")
      .layer("Ingest").definedBy("dev.quarry.ingest..")
      .layer("Sandbox").definedBy("dev.quarry.sandbox..", "dev.quarry.proto..")
      .layer("Search").definedBy("dev.quarry.search..")
      .layer("Tenancy").definedBy("dev.quarry.tenancy..")
      .layer("Store").definedBy("dev.quarry.store..")
      .layer("Ground").definedBy("dev.quarry.config..", "dev.quarry.telemetry..")
      .whereLayer("Entry").mayNotBeAccessedByAnyLayer()
      .whereLayer("Wiring").mayOnlyAccessLayers("Http", "Agent", "Callbacks", "Ingest", "Sandbox", "Search", "Tenancy",
          "Store", "Ground")
      .whereLayer("Http").mayOnlyAccessLayers("Agent", "Callbacks", "Ingest", "Sandbox", "Search", "Tenancy", "Store", "Ground")
      .whereLayer("Agent").mayOnlyAccessLayers("Callbacks", "Sandbox", "Search", "Tenancy", "Store", "Ground")
      // What sandbox code may call: search, documents, the model (as given) and the token account.
      .whereLayer("Callbacks").mayOnlyAccessLayers("Sandbox", "Search", "Tenancy", "Store", "Ground")
      .whereLayer("Ingest").mayOnlyAccessLayers("Search", "Tenancy", "Store", "Ground")
      .whereLayer("Sandbox").mayOnlyAccessLayers("Ground")
      .whereLayer("Search").mayOnlyAccessLayers("Store", "Ground")
      .whereLayer("Tenancy").mayOnlyAccessLayers("Store", "Ground")
      .whereLayer("Store").mayOnlyAccessLayers("Ground")
      .whereLayer("Ground").mayNotAccessAnyLayer();

  @ArchTest
  static final ArchRule noPackageCycles = slices().matching("dev.quarry.(*)..").should().beFreeOfCycles();

  @ArchTest
  static final ArchRule protocolStaysInTheSandbox = noClasses()
      .that().resideOutsideOfPackages("dev.quarry.sandbox..", "dev.quarry.proto..")
      .should().dependOnClassesThat().resideInAPackage("dev.quarry.proto..")
      .because("the sandbox speaks Quarry's vocabulary (CellOutcome.Status, CellListener.Stream,"
          + " CallbackType) outside its package; the generated protocol types stay inside");

  @ArchTest
  static final ArchRule environmentReadAtTheEntryOnly = noClasses()
      .that().resideOutsideOfPackage("dev.quarry.cli..")
      .should().callMethod(System.class, "getenv")
      .orShould().callMethod(System.class, "getenv", String.class)
      .because("settings are read once, by GatewaySettings from what the entry point passes, and handed"
          + " down as records");
}
