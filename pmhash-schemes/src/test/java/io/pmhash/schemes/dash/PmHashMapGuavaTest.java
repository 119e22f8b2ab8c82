package io.pmhash.schemes.dash;

import com.google.common.collect.testing.ConcurrentMapTestSuiteBuilder;
import com.google.common.collect.testing.TestStringMapGenerator;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import io.pmhash.core.PoolOptions;
import io.pmhash.map.Codec;
import io.pmhash.map.PmHash;
import io.pmhash.map.PmHashMap;
import io.pmhash.map.TableOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import junit.framework.Test;

/**
 * Guava's {@code ConcurrentMapTestSuiteBuilder} (guava-testlib, a JUnit 4 suite run by the
 * vintage engine) against {@link PmHashMap} of String to String in Dash-EH's pointer mode, with
 * the features ConcurrentHashMap has: general purpose (put, remove, clear, no null keys or
 * values), iterator removal, any size (919 tests). Every map lives in its own volatile pool,
 * closed after each test.
 */
public final class PmHashMapGuavaTest {
  private PmHashMapGuavaTest() {}

  private static final List<PmHashMap<?, ?>> OPEN = new ArrayList<>();
  /** Small pools: an iterator tester creates hundreds of maps before a tear-down closes them. */
  private static final TableOptions OPTIONS = TableOptions.scheme("dash-eh")
      .withPoolOptions(PoolOptions.defaults().withMaxSize(64L << 20));

  /** @return the suite (junit.framework.Test is on the class path, not a module: hence "exports") */
  @SuppressWarnings("exports")
  public static Test suite() {
    return ConcurrentMapTestSuiteBuilder.using(new TestStringMapGenerator() {
          @Override
          protected Map<String, String> create(Map.Entry<String, String>[] entries) {
            PmHashMap<String, String> map = PmHash.createVolatileMap(Codec.utf8(), Codec.utf8(), OPTIONS);
            synchronized (OPEN) {
              OPEN.add(map);
            }
            for (Map.Entry<String, String> e : entries) {
              map.put(e.getKey(), e.getValue());
            }
            return map;
          }
        })
        .named("PmHashMap<String, String> in dash-eh pointer mode")
        .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE, CollectionSize.ANY)
        .withTearDown(() -> {
          synchronized (OPEN) {
            OPEN.forEach(PmHashMap::close);
            OPEN.clear();
          }
        })
        .createTestSuite();
  }
}
