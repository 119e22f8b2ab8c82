/** The pool, durability modes and the persistence seam. */
package io.pmhash.core;
