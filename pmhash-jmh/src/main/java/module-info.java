/** pmhash jmh module (content arrives with its issue). */
module io.pmhash.jmh {
  requires io.pmhash.schemes;
}
