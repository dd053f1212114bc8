#pragma once
// `--mpi`: a run read by the processes of an MPI job (mpirun, srun), for the commands whose per-rank
// summaries travel (analyze, advise, comm). Built only into tuneprof-mpi, where Open MPI is found; the
// tuneprof executable stays free of MPI and hands `--mpi` over to it.
namespace tuneprof::mpi {

// Joins the MPI job and installs its map sharing (pipeline/rank_map.h MapSharing) for the command that
// follows; on every process but the first, which reduces and prints, stdout and stderr go to /dev/null
// (every error about a file travels to the first with the file's summary). Leaves the job on destruction.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace tuneprof::mpi
