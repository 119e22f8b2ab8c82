/**
 * The persistent hashing schemes of the papers pmhash implements, one package per
 * paper. The schemes arrive issue by issue; this module holds only their common
 * entry package until the first one (Dash-EH) lands.
 */
module io.pmhash.schemes {
  requires transitive io.pmhash.core;

  exports io.pmhash.schemes;

  provides io.pmhash.map.spi.SchemeProvider with
      io.pmhash.schemes.level.LevelProvider;
}
