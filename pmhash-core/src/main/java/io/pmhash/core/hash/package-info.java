/**
 * The 64-bit key hash every scheme uses: libstdc++'s {@code std::_Hash_bytes}, the
 * function behind {@code std::hash<std::string>} and the one the Dash benchmarks
 * (and the CCEH and level hashing code they compare against) hash keys with. See
 * {@link io.pmhash.core.hash.Hashing}. {@link io.pmhash.core.hash.ByteMatch} is the SWAR byte
 * compare with which the schemes probe one-byte fingerprints taken from that hash.
 */
package io.pmhash.core.hash;
