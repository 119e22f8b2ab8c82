/**
 * The persistent hashing schemes of the papers pmhash implements, one package per paper
 * ({@code dash}: Dash-EH and Dash-LH; {@code cceh}; {@code level}; {@code group}; {@code esh}
 * with ACCEH; {@code nvlh} with its NVDH baseline). Each registers a {@link io.pmhash.map.spi.SchemeProvider} (here and in
 * {@code META-INF/services}, so the class path works too) and documents its layout in {@code
 * docs/format/<scheme>.md}; {@link io.pmhash.map.PmHash#schemes()} lists what a build provides.
 */
module io.pmhash.schemes {
  requires transitive io.pmhash.core;

  exports io.pmhash.schemes.dash;

  provides io.pmhash.map.spi.SchemeProvider with
      io.pmhash.schemes.cceh.CcehProvider,
      io.pmhash.schemes.dash.DashEhProvider,
      io.pmhash.schemes.group.GroupProvider,
      io.pmhash.schemes.dash.DashLhProvider,
      io.pmhash.schemes.esh.EshProvider,
      io.pmhash.schemes.level.LevelProvider,
      io.pmhash.schemes.nvlh.NvlhProvider,
      io.pmhash.schemes.nvlh.NvdhProvider;
}
