/** pmhash stress module (content arrives with its issue). */
module io.pmhash.stress {
  requires io.pmhash.schemes;
}
