package io.pmhash.map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pmhash.core.Pool;
import io.pmhash.core.PoolOptions;
import io.pmhash.core.SchemeMismatchException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The entry point's errors, without any scheme on the module path (pmhash-core alone). */
class PmHashTest {
  @TempDir Path dir;

  @Test
  void unknownSchemeIsNamedWithTheAvailableOnes() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PmHash.create(dir.resolve("t.pool"), TableOptions.scheme("no-such")));
    assertTrue(e.getMessage().contains("unknown scheme 'no-such'"), e.getMessage());
    assertTrue(e.getMessage().contains("pmhash-schemes"), "says where schemes come from: " + e.getMessage());
    assertFalse(Files.exists(dir.resolve("t.pool")), "nothing created");
  }

  @Test
  void createNeedsAScheme() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PmHash.create(dir.resolve("t.pool"), TableOptions.any()));
    assertTrue(e.getMessage().contains("TableOptions.scheme"), e.getMessage());
  }

  @Test
  void openOfAPoolWhoseSchemeIsNotProvidedIsRefusedAndLeftAlone() throws Exception {
    Path file = dir.resolve("t.pool");
    Pool.create(file, PoolOptions.defaults().withScheme("elsewhere", 1).withInitialSize(1 << 20)).close();
    byte[] before = Files.readAllBytes(file);
    SchemeMismatchException e = assertThrows(SchemeMismatchException.class, () -> PmHash.open(file, TableOptions.any()));
    assertTrue(e.getMessage().contains("'elsewhere'"), e.getMessage());
    assertArrayEquals(before, Files.readAllBytes(file), "the scheme is checked before anything is written");
  }

  @Test
  void optionsAreImmutableCopies() {
    TableOptions a = TableOptions.scheme("x");
    TableOptions b = a.withParam("p", 3).withInitialCapacity(10);
    assertTrue(a.params().isEmpty());
    assertEquals(3, b.param("p", 0));
    assertEquals(9, b.param("q", 9));
    assertEquals(10, b.initialCapacity());
    assertThrows(IllegalArgumentException.class, () -> a.withInitialCapacity(-1));
    assertThrows(UnsupportedOperationException.class, () -> b.params().put("z", 1L));
  }
}
