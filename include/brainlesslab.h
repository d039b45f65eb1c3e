/* BrainlessLab: every public header in one include.
 *   #include <brainlesslab.h>
 *   cc prog.c $(pkg-config --cflags --libs brainlesslab)
 * Each header is also usable on its own (the headers under include/brainlesslab/); they
 * compile as C11 and as C++. */
#ifndef BRAINLESSLAB_H
#define BRAINLESSLAB_H

#include "brainlesslab/export.h"
#include "brainlesslab/error.h"
#include "brainlesslab/context.h"
#include "brainlesslab/mpi.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/table.h"
#include "brainlesslab/sonata.h"
#include "brainlesslab/sign_policy.h"
#include "brainlesslab/connectome.h"
#include "brainlesslab/select.h"
#include "brainlesslab/import.h"
#include "brainlesslab/fetch.h"
#include "brainlesslab/synth.h"
#include "brainlesslab/model.h"
#include "brainlesslab/stimulus.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/analysis.h"
#include "brainlesslab/record.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/reservoir.h"
#include "brainlesslab/seed.h"
#include "brainlesslab/probe.h"
#include "brainlesslab/task.h"
#include "brainlesslab/solvers.h"

#endif
