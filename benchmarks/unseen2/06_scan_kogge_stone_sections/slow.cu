// unseen2/06_scan_kogge_stone_sections / slow: inclusive prefix sums of independent SECTION_SIZE-element
// sections (a per-row cumsum over rows of 1024, or phase 1 of a hierarchical scan), with the Kogge-Stone
// shared-memory scan of PMPP 4th ed. ch. 11 (Fig. 11.3): log2(1024) = 10 steps, each with two
// __syncthreads() and n - stride additions (work-inefficient), the whole block waiting at every barrier.
// Launch: block SECTION_SIZE, grid ceil(N / SECTION_SIZE).
#define SECTION_SIZE 1024

extern "C" __global__ void kogge_stone_scan(const int *X, int *Y, unsigned int N)
{
    __shared__ int XY[SECTION_SIZE];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        XY[threadIdx.x] = X[i];
    else
        XY[threadIdx.x] = 0;
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        int temp;
        if (threadIdx.x >= stride)
            temp = XY[threadIdx.x] + XY[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride)
            XY[threadIdx.x] = temp;
    }
    if (i < N)
        Y[i] = XY[threadIdx.x];
}
