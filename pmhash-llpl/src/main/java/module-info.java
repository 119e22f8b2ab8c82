/**
 * The llpl pool backend: a pmhash pool hosted in a PMDK (libpmemobj) pool file through Intel's
 * llpl, selected with {@code PoolOptions.withBackend("llpl")} and found by {@link
 * java.util.ServiceLoader}. Optional: the FFM default never loads it. See {@code docs/llpl.md}.
 */
@SuppressWarnings("requires-automatic") // llpl 1.2.0 ships no module-info; its automatic name is "llpl"
module io.pmhash.llpl {
  requires io.pmhash.core;
  requires llpl;

  provides io.pmhash.core.spi.PoolBackend with
      io.pmhash.llpl.LlplPoolBackend;
}
