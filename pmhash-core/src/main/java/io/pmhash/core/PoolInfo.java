package io.pmhash.core;

/**
 * What a pool's validated header says, from {@link Pool#inspect}.
 *
 * @param scheme the scheme name
 * @param schemeVersion the scheme's layout version
 * @param schemeParams the scheme parameters
 * @param cleanShutdown whether the last opener closed it cleanly
 * @param recoveryEpoch the recovery epoch (number of opens, plus one)
 * @param recordedSize the file size the header records
 * @param fileSize the file's actual size
 */
public record PoolInfo(
    String scheme,
    int schemeVersion,
    long[] schemeParams,
    boolean cleanShutdown,
    long recoveryEpoch,
    long recordedSize,
    long fileSize) {
  /** @return a copy of the scheme parameters */
  @Override
  public long[] schemeParams() {
    return schemeParams.clone();
  }
}
