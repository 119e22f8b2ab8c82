/**
 * The persistent hashing schemes of the papers pmhash implements, one package per paper. Each
 * registers a {@link io.pmhash.map.spi.SchemeProvider} (here and in {@code
 * META-INF/services}, so the class path works too).
 */
module io.pmhash.schemes {
  requires transitive io.pmhash.core;

  exports io.pmhash.schemes;
  exports io.pmhash.schemes.dash;

  provides io.pmhash.map.spi.SchemeProvider with
      io.pmhash.schemes.cceh.CcehProvider,
      io.pmhash.schemes.dash.DashEhProvider;
}
