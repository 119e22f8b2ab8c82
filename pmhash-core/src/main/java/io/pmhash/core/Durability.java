package io.pmhash.core;

/** Placeholder; replaced by the pool work. */
public enum Durability {
  AUTO
}
