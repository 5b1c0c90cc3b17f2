/* SMPI smoke test of an exported platform: rank 0 sends one message of SIZE bytes to every other
 * rank in turn, each alone, and prints the time and bandwidth MPI saw. SMPI adds MPI's own costs
 * (its protocol switch, its per-message overheads), so the figures are close to, not equal to,
 * topsim's; what this proves is that the file runs real MPI code. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  long size_B = argc > 1 ? atol(argv[1]) : 160000000L;
  /* SMPI_SHARED_MALLOC: every rank gets the same pages, so simulating big messages costs no memory. */
  char* buffer = (char*)SMPI_SHARED_MALLOC(size_B);
  for (int peer = 1; peer < ranks; ++peer) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start_s = MPI_Wtime();
    if (rank == 0) MPI_Send(buffer, (int)size_B, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    if (rank == peer) {
      MPI_Recv(buffer, (int)size_B, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double time_s = MPI_Wtime() - start_s;
      printf("rank 0 -> rank %d: %ld B in %.9f s, %.2f GB/s\n", peer, size_B, time_s, size_B / time_s / 1e9);
      fflush(stdout);
    }
  }
  SMPI_SHARED_FREE(buffer);
  MPI_Finalize();
  return 0;
}
