/**
 * Concurrency building blocks over persistent memory: the optimistic
 * {@link io.pmhash.core.concurrent.VersionLock} of Dash §4.4 and the
 * {@link io.pmhash.core.concurrent.EpochReclaimer} that lets lock-free readers finish
 * with memory a writer has unlinked before it is reused.
 *
 * <h2>Memory-order vocabulary</h2>
 *
 * Accessors are named after the {@link java.lang.invoke.VarHandle} access mode they
 * use, as in JCTools: {@code xxxAcquire} is {@code getAcquire}, {@code setXxxRelease}
 * is {@code setRelease}, {@code casXxx} is {@code compareAndSet} (volatile semantics),
 * {@code xxxVolatile} / {@code setXxxVolatile} are {@code getVolatile} /
 * {@code setVolatile}, and a name without a suffix is a plain access.
 *
 * <h2>Persistence</h2>
 *
 * Nothing in this package flushes or drains: a lock word lives in persistent memory
 * but its durability is never needed (recovery resets it), and epochs are volatile
 * state.
 */
package io.pmhash.core.concurrent;
