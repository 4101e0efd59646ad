// unseen2/14_shuffle3_template_simple / slow: TensorFlow's ShuffleInTensor3Simple
// (tensorflow/core/kernels/conv_2d_gpu.h, Apache-2.0), the generic permutation of a rank-3 tensor used
// for NHWC <-> NCHW and batched transposes: templated on the element type and the permutation, a
// grid-stride loop over the OUTPUT (sequential writes), each flat index split into a tensor index with
// `/` and `%` and re-flattened for the input. For the (0, 2, 1) swap the reads of a warp are d2 elements
// apart. Re-written here with the dimensions as three ints instead of TF's Dimension<3>.
// Launch: block 1024, grid min(ceil(n / 1024), 32 * sm_count); entry shuffle_in_tensor3_simple<double, 0, 2, 1>.
template <typename T, int sp0, int sp1, int sp2>
__global__ void shuffle_in_tensor3_simple(int nthreads, const T *__restrict__ input, int d0, int d1, int d2,
                                          T *__restrict__ output)
{
    int input_dims[3] = {d0, d1, d2};
    int output_dims[3];
    output_dims[sp0] = input_dims[0];
    output_dims[sp1] = input_dims[1];
    output_dims[sp2] = input_dims[2];
    for (int output_index = blockIdx.x * blockDim.x + threadIdx.x; output_index < nthreads;
         output_index += blockDim.x * gridDim.x) {
        int output_tensor_index[3];
        int rest = output_index;
        output_tensor_index[2] = rest % output_dims[2];
        rest /= output_dims[2];
        output_tensor_index[1] = rest % output_dims[1];
        output_tensor_index[0] = rest / output_dims[1];
        int input_tensor_index[3];
        input_tensor_index[0] = output_tensor_index[sp0];
        input_tensor_index[1] = output_tensor_index[sp1];
        input_tensor_index[2] = output_tensor_index[sp2];
        int input_index = (input_tensor_index[0] * input_dims[1] + input_tensor_index[1]) * input_dims[2] +
                          input_tensor_index[2];
        output[output_index] = __ldg(input + input_index);
    }
}

template __global__ void shuffle_in_tensor3_simple<double, 0, 2, 1>(int, const double *__restrict__, int, int, int,
                                                                    double *__restrict__);
